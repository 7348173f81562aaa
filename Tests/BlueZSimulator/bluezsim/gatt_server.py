"""Placeholder for the local GATT server side (GattManager1, advertising, remote central).

The real extension replaces this file; until then the simulator installs this no-op so the
extension hook is exercised from the start.
"""
from __future__ import annotations


class _NoServerSide:
    def install(self, sim) -> None:
        """Called after the org.bluez tree is exported, and again after each bluetoothd restart."""

    def reset(self) -> None:
        """Called when the simulated bluetoothd stops."""


def extension() -> object:
    return _NoServerSide()
