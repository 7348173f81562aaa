"""org.gattway.Simulator1 at /org/gattway/simulator: how tests drive the simulated world."""
from __future__ import annotations

from dbus_fast import DBusError, Message, Variant

from .interface import Interface, method

CONTROL_PATH = "/org/gattway/simulator"
CONTROL_ERROR = "org.gattway.Simulator1.Error"


def control_error(message: str) -> DBusError:
    return DBusError(CONTROL_ERROR, message)


class Control(Interface):
    name = "org.gattway.Simulator1"

    def __init__(self, sim) -> None:
        self.sim_ = sim

    def install(self) -> None:
        self.sim_.export_control(CONTROL_PATH, self)

    def _adapter(self, name: str):
        adapter = self.sim_.adapters.get(name)
        if adapter is None:
            raise control_error(f"unknown adapter {name!r} (have {sorted(self.sim_.adapters)})")
        return adapter

    @method("sb", "")
    async def SetPowered(self, msg: Message, adapter: str, on: bool):
        await self._adapter(adapter).set_powered(on)

    @method("", "a{sv}")
    def GetCounters(self, msg: Message):
        return {k: Variant("t", v) for k, v in self.sim_.counters.items()}
