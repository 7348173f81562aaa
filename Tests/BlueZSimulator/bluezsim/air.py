"""The air between hci0 and hci1 (placeholder until the mirror is built)."""
from __future__ import annotations

from typing import Any


class Air:
    def __init__(self, sim: Any, gatt: Any, advertising: Any) -> None:
        self.sim = sim
        self.gatt = gatt
        self.advertising = advertising

    def install(self) -> None:
        pass

    def reset(self) -> None:
        pass
