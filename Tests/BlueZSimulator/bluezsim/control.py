"""org.gattway.Simulator1 at /org/gattway/simulator: how tests drive the simulated world.

Every method is documented in README.md. Failures are `org.gattway.Simulator1.Error` with the cause.
"""
from __future__ import annotations

import json

from dbus_fast import DBusError, Message, Variant

from .interface import Interface, method
from .scenario import ScenarioError, validate
from .uuids import normalize_uuid

CONTROL_PATH = "/org/gattway/simulator"
CONTROL_ERROR = "org.gattway.Simulator1.Error"

DISCONNECT_REASONS = {
    "remote": ("org.bluez.Reason.Remote", "Connection terminated by remote user"),
    "timeout": ("org.bluez.Reason.Timeout", "Connection timed out"),
    "local": ("org.bluez.Reason.Local", "Connection terminated by local host"),
    "authentication": ("org.bluez.Reason.Authentication", "Connection terminated due to authentication failure"),
    "suspend": ("org.bluez.Reason.Suspend", "Connection terminated by local host for suspend"),
}


def control_error(message: str) -> DBusError:
    return DBusError(CONTROL_ERROR, message)


def _json(text: str, what: str) -> dict:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise control_error(f"{what}: invalid JSON: {e}") from None
    if not isinstance(value, dict):
        raise control_error(f"{what}: expected a JSON object")
    return value


class Control(Interface):
    name = "org.gattway.Simulator1"

    def __init__(self, sim) -> None:
        self.world = sim

    def install(self) -> None:
        self.world.export_control(CONTROL_PATH, self)

    # ----- lookups ---------------------------------------------------------------------------

    def _adapter(self, name: str):
        adapter = self.world.adapters.get(name)
        if adapter is None:
            raise control_error(f"unknown adapter {name!r} (have {sorted(self.world.adapters)})")
        return adapter

    def _peripheral(self, address: str):
        """`AA:BB:..` or `hci1/AA:BB:..` when the same address exists on several adapters."""
        return self._heard_peripheral(address)[0]

    def _heard_peripheral(self, address: str):
        """(peripheral, adapter named in `hciN/AA:BB:..` or None)."""
        adapter = None
        if "/" in address:
            adapter, address = address.split("/", 1)
        p = self.world.find_peripheral(address, adapter)
        if p is None:
            raise control_error(f"no virtual peripheral {address}" + (f" on {adapter}" if adapter else ""))
        return p, adapter

    def _char(self, address: str, uuid: str):
        p = self._peripheral(address)
        try:
            char = p.char_by_uuid(uuid)
        except ValueError as e:
            raise control_error(str(e)) from None
        if char is None:
            raise control_error(f"{p.address} has no characteristic {uuid}")
        return p, char

    # ----- peripherals -----------------------------------------------------------------------

    @method("s", "s")
    def AddPeripheral(self, msg: Message, spec_json: str):
        spec = _json(spec_json, "AddPeripheral")
        try:
            validate({"peripherals": [spec]}, "AddPeripheral")
        except ScenarioError as e:
            raise control_error(str(e)) from None
        try:
            p = self.world.add_peripheral(spec, spec.get("adapter", "hci0"))
        except (ValueError, KeyError, TypeError) as e:
            raise control_error(f"AddPeripheral: bad spec: {e!r}") from None
        return p.address

    @method("s", "")
    async def RemovePeripheral(self, msg: Message, address: str):
        await self.world.remove_peripheral(self._peripheral(address))

    @method("ss", "")
    def UpdateAdvert(self, msg: Message, address: str, patch_json: str):
        try:
            self._peripheral(address).update_advert(_json(patch_json, "UpdateAdvert"))
        except (ValueError, TypeError) as e:
            raise control_error(f"UpdateAdvert: {e}") from None

    @method("sn", "")
    def SetRSSI(self, msg: Message, address: str, rssi: int):
        """`hciN/AA:..` sets the signal that adapter hears; a bare address sets it on every adapter that hears it."""
        p, adapter = self._heard_peripheral(address)
        try:
            p.set_rssi(rssi, adapter)
        except ValueError as e:
            raise control_error(f"SetRSSI: {e}") from None

    @method("s", "a{sn}")
    def GetSignals(self, msg: Message, address: str):
        """The RSSI each adapter that hears the peripheral receives its next advert with."""
        return dict(self._peripheral(address).signals)

    @method("s", "s")
    def GetLinkAdapter(self, msg: Message, address: str):
        """The adapter connected to the peripheral now, or "" when it has no link."""
        link = self._peripheral(address).link
        return link.adapter.name if link is not None else ""

    @method("ssb", "")
    async def SetHeard(self, msg: Message, address: str, adapter: str, heard: bool):
        """Moves the peripheral out of (or back into) `adapter`'s range: no reports reach that adapter, its
        connection attempts go unanswered, and a link from it drops as a supervision timeout does."""
        p = self._peripheral(address)
        if adapter not in p.signals:
            raise control_error(f"{p.address} is not on the air of {adapter} (heard by {', '.join(p.adapters)})")
        if heard:
            p.unheard.discard(adapter)
            return
        p.unheard.add(adapter)
        dev = self.world.device_for(p, adapter)
        if dev is not None and dev.peripheral is p:
            await dev.drop_link(*DISCONNECT_REASONS["timeout"])

    @method("sq", "")
    def SetMTU(self, msg: Message, address: str, mtu: int):
        if mtu < 23:
            raise control_error("ATT MTU must be at least 23")
        self._peripheral(address).mtu = mtu

    @method("ssay", "")
    def SetValue(self, msg: Message, address: str, uuid: str, value: bytes):
        _, char = self._char(address, uuid)
        char.value = bytearray(value)

    # ----- notifications ---------------------------------------------------------------------

    @method("ssay", "b")
    def Notify(self, msg: Message, address: str, uuid: str, value: bytes):
        _, char = self._char(address, uuid)
        return char.notify_now(bytes(value))

    @method("ss", "b")
    def CloseNotifySocket(self, msg: Message, address: str, uuid: str):
        """bluetoothd closes the AcquireNotify socket while the link stays up: the application sees a hang-up."""
        _, char = self._char(address, uuid)
        sock = char.remote.notify_sock if char.remote is not None else None
        if sock is None:
            return False
        sock.close()
        return True

    @method("ssdus", "")
    def StartNotifying(self, msg: Message, address: str, uuid: str, rate_hz: float, count: int, pattern: str):
        _, char = self._char(address, uuid)
        try:
            char.start_notifying(rate_hz, count, pattern)
        except ValueError as e:
            raise control_error(f"StartNotifying: {e}") from None

    # ----- links and faults -------------------------------------------------------------------

    @method("ssu", "")
    def FailConnect(self, msg: Message, address: str, reason: str, count: int):
        """The next `count` Connect() calls fail with org.bluez.Error.Failed `reason`."""
        p = self._peripheral(address)
        p.connect_failures = [reason] * max(1, count)

    @method("sb", "")
    def SetConnectHang(self, msg: Message, address: str, hang: bool):
        self._peripheral(address).connect_hang = hang

    @method("ss", "")
    async def Disconnect(self, msg: Message, address: str, reason: str):
        if reason not in DISCONNECT_REASONS:
            raise control_error(f"reason must be one of {sorted(DISCONNECT_REASONS)}")
        p, adapter = self._heard_peripheral(address)
        # Without an adapter: the link of whichever adapter holds one (else the first adapter's device).
        dev = self.world.device_for(p, adapter) if adapter or p.link is None else p.link
        if dev is None:
            raise control_error(f"{p.address} has no device object (not discovered yet)")
        await dev.drop_link(*DISCONNECT_REASONS[reason])

    @method("sb", "")
    async def SetPowered(self, msg: Message, adapter: str, on: bool):
        await self._adapter(adapter).set_powered(on)

    @method("d", "")
    async def RestartBluetoothd(self, msg: Message, down_seconds: float):
        if down_seconds < 0 or down_seconds > 600:
            raise control_error("down_seconds must be within 0…600")
        await self.world.restart_bluetoothd(down_seconds)

    @method("sssu", "")
    def InjectError(self, msg: Message, method_name: str, error_name: str, message: str, count: int):
        """The next `count` calls (0 = until cleared) of `method_name` fail with `error_name`."""
        if not error_name or "." not in error_name:
            raise control_error("error_name must be a full D-Bus error name")
        self.world.injected_errors.setdefault(method_name, []).append([error_name, message, count])

    @method("", "")
    def ClearFaults(self, msg: Message):
        self.world.injected_errors.clear()
        self.world.reply_delays.clear()

    @method("sd", "")
    def SetReplyDelay(self, msg: Message, method_name: str, seconds: float):
        if seconds < 0 or seconds > 600:
            raise control_error("seconds must be within 0…600")
        if seconds == 0:
            self.world.reply_delays.pop(method_name, None)
        else:
            self.world.reply_delays[method_name] = seconds

    # ----- inspection ------------------------------------------------------------------------

    @method("", "a{sv}")
    def GetCounters(self, msg: Message):
        return {k: Variant("t", v) for k, v in self.world.counters.items() if v >= 0}

    @method("ss", "a(ayqs)")
    def GetWrites(self, msg: Message, address: str, uuid: str):
        p, char = self._char(address, uuid)
        return [[v, o, k] for v, o, k in p.writes.get(char.uuid, [])]

    @method("", "as")
    def ListPeripherals(self, msg: Message):
        return [f"{adapter}/{p.address}" for p in self.world.peripherals.values() for adapter in p.adapters]

    @method("ss", "b")
    def IsSubscribed(self, msg: Message, address: str, uuid: str):
        _, char = self._char(address, normalize_uuid(uuid))
        return char.subscribed
