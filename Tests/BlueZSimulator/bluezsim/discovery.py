"""Discovery sessions and filters (filled in below)."""
from __future__ import annotations


class Discovery:
    def __init__(self, adapter) -> None:
        self.adapter = adapter
        self.discovering = False

    def shutdown(self) -> None:
        pass

    def power_off(self) -> None:
        pass
