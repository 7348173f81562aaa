"""org.bluez.Device1 (src/device.c): properties merged from adverts, and the LE connection model."""
from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from dbus_fast import Message, Variant

from . import errors
from .gatt_client import GattClient
from .interface import Interface, method

if TYPE_CHECKING:
    from .adapter import Adapter
    from .peripheral import VirtualPeripheral

HANG_TIMEOUT = 20.0  # a connection attempt nobody answers ends like the kernel's LE connect timeout
UNANSWERED_CONNECT = 2.0  # how long an attempt to a peripheral that does not accept it runs before it fails
LINK_POLL = 0.02  # how often a waiting attempt looks whether the peripheral's link has become free


class Device:
    def __init__(self, adapter: "Adapter", peripheral: "VirtualPeripheral") -> None:
        self.adapter = adapter
        self.sim = adapter.sim
        self.peripheral = peripheral
        self.address = peripheral.address
        self.address_type = peripheral.address_type
        self.path = f"{adapter.path}/dev_{self.address.replace(':', '_')}"
        self.name: str | None = None
        self.alias = ""
        self.rssi: int | None = None
        self.tx_power: int | None = None
        self.appearance: int | None = None
        self.flags: bytes | None = None
        self.uuids: list[str] = []
        self.manufacturer: dict[int, bytes] = {}
        self.service_data: dict[str, bytes] = {}
        self.paired = False
        self.trusted = False
        self.blocked = False
        self.connected = False
        self.connecting: asyncio.Task | None = None
        self.services_resolved = False
        self.temporary = True
        self.exported = False
        self.gatt = GattClient(self)
        self.iface = Device1(self)

    # ----- objects ---------------------------------------------------------------------------

    def export(self) -> None:
        self.sim.export(self.path, self.iface)
        self.exported = True

    def remove_objects(self) -> None:
        self.gatt.remove_all()
        if self.exported:
            self.sim.unexport(self.path)
            self.exported = False

    def shutdown(self) -> None:
        """bluetoothd stops: sockets close and per-object client watches go with the objects."""
        if self.connecting is not None:
            self.connecting.cancel()
        for char in self.gatt.chars:
            char.forget()
        if self.connected:
            self._release_link()
        self.connected = False

    def peripheral_connectable(self) -> bool:
        return self.peripheral.connectable

    def changed(self, changed: dict[str, Variant], invalidated: list[str] | None = None) -> None:
        if self.exported:
            self.sim.emit_properties_changed(self.path, Device1.name, changed, invalidated)

    def display_alias(self) -> str:
        return self.alias or self.name or self.address.replace(":", "-")

    def get_properties(self) -> dict[str, Variant]:
        p: dict[str, Variant] = {
            "Address": Variant("s", self.address),
            "AddressType": Variant("s", self.address_type),
        }
        if self.name is not None:
            p["Name"] = Variant("s", self.name)
        p["Alias"] = Variant("s", self.display_alias())
        if self.appearance is not None:
            p["Appearance"] = Variant("q", self.appearance)
        p["Paired"] = Variant("b", self.paired)
        if self.sim.version_tuple >= (5, 65):
            p["Bonded"] = Variant("b", self.paired)
        p["Trusted"] = Variant("b", self.trusted)
        p["Blocked"] = Variant("b", self.blocked)
        p["LegacyPairing"] = Variant("b", False)
        if self.rssi is not None:
            p["RSSI"] = Variant("n", self.rssi)
        p["Connected"] = Variant("b", self.connected)
        p["UUIDs"] = Variant("as", list(self.uuids))
        p["Adapter"] = Variant("o", self.adapter.path)
        if self.manufacturer:
            p["ManufacturerData"] = Variant("a{qv}", {k: Variant("ay", v) for k, v in self.manufacturer.items()})
        if self.service_data:
            p["ServiceData"] = Variant("a{sv}", {k: Variant("ay", v) for k, v in self.service_data.items()})
        if self.tx_power is not None:
            p["TxPower"] = Variant("n", self.tx_power)
        p["ServicesResolved"] = Variant("b", self.services_resolved)
        if self.flags is not None:
            p["AdvertisingFlags"] = Variant("ay", self.flags)
        return p

    # ----- advertising reports ----------------------------------------------------------------

    def apply_report(self, r: dict, duplicate: bool, rssi_threshold: int, announce: bool) -> None:
        """device_set_*() for one report: signal only what changed (all data again with DuplicateData)."""
        ch: dict[str, Variant] = {}
        name = r.get("name")
        # An empty name AD carries nothing (eir.c stores no name for it).
        if name and (r.get("name_complete", True) or self.name is None) and name != self.name:
            self.name = name
            ch["Name"] = Variant("s", name)
            if not self.alias:
                ch["Alias"] = Variant("s", name)
        rssi = r["rssi"]
        # device_set_rssi_with_delta(): a threshold of 0 (filtered discovery) signals every report,
        # even an unchanged value; an unknown RSSI is always replaced.
        if self.rssi is None or abs(self.rssi - rssi) >= rssi_threshold:
            self.rssi = rssi
            ch["RSSI"] = Variant("n", rssi)
        tx = r.get("tx_power")
        if tx is not None and tx != self.tx_power:
            self.tx_power = tx
            ch["TxPower"] = Variant("n", tx)
        app = r.get("appearance")
        if app is not None and app != self.appearance:
            self.appearance = app
            ch["Appearance"] = Variant("q", app)
        flags = r.get("flags")
        if flags is not None and bytes([flags]) != self.flags:
            self.flags = bytes([flags])
            ch["AdvertisingFlags"] = Variant("ay", self.flags)
        advertised = list(r.get("uuids", []))
        if self.sim.version_tuple >= (5, 69):  # add_service_data() merges service data UUIDs from 5.69 on
            advertised += list(r.get("service_data", {}))
        new_uuids = [u for u in advertised if u not in self.uuids]
        if new_uuids:
            self.uuids.extend(new_uuids)
            ch["UUIDs"] = Variant("as", list(self.uuids))
        msd = r.get("manufacturer_data") or {}
        if msd:
            if duplicate:
                self.manufacturer = dict(msd)  # bt_ad_clear_manufacturer_data, then re-add this report's
                changed = True
            else:
                changed = any(self.manufacturer.get(k) != v for k, v in msd.items())
                self.manufacturer.update(msd)
            if changed:
                ch["ManufacturerData"] = Variant(
                    "a{qv}", {k: Variant("ay", v) for k, v in self.manufacturer.items()})
        sd = r.get("service_data") or {}
        if sd:
            if duplicate:
                self.service_data = dict(sd)
                changed = True
            else:
                changed = any(self.service_data.get(k) != v for k, v in sd.items())
                self.service_data.update(sd)
            if changed:
                ch["ServiceData"] = Variant("a{sv}", {k: Variant("ay", v) for k, v in self.service_data.items()})
        if ch and announce:
            self.changed(ch)

    def invalidate_rssi(self) -> None:
        gone = []
        if self.rssi is not None:
            self.rssi = None
            gone.append("RSSI")
        if self.tx_power is not None:
            self.tx_power = None
            gone.append("TxPower")
        if gone:
            self.changed({}, gone)

    # ----- connection ------------------------------------------------------------------------

    async def connect(self) -> None:
        """dev_connect() for LE (5.66 device.c)."""
        if self.connected:
            return
        self.temporary = False  # btd_device_set_temporary(dev, false) before the attempt
        if self.connecting is not None:
            # device_connect_le() returns -EALREADY; dev_connect() replies with strerror().
            raise errors.failed("Operation already in progress")
        if not self.adapter.powered:
            # bt_io_connect() fails at once on a powered-off controller (-EIO).
            raise errors.failed("Input/output error")
        self.connecting = asyncio.current_task()
        try:
            await self._establish()
        except asyncio.CancelledError:
            # device_request_disconnect() (Disconnect, RemoveDevice, power-off) answers a pending
            # Connect with ERR_BREDR_CONN_CANCELED, LE included.
            raise errors.failed("br-connection-canceled") from None
        finally:
            self.connecting = None
        # GATT discovery runs after the reply, as in bluetoothd.
        self.sim.spawn(self.gatt.link_up())

    async def _establish(self) -> None:
        p = self.peripheral
        self.sim.counters["connect_attempts"] += 1
        # 5.66 att_connect_cb() turns every failed LE connection (the kernel's timeout included) into -ECONNABORTED,
        # which btd_error_le_conn_from_errno() reports as "le-connection-abort-by-local".
        if not p.present or not p.connectable or not p.heard_on(self.adapter.name):
            await asyncio.sleep(min(HANG_TIMEOUT, UNANSWERED_CONNECT))
            raise errors.failed("le-connection-abort-by-local")
        if p.connect_hang:
            await asyncio.sleep(HANG_TIMEOUT)
            raise errors.failed("le-connection-abort-by-local")
        await asyncio.sleep(p.connect_delay)
        await self._take_link(p)
        if p.connect_failures:
            p.link = None
            reason = p.connect_failures.pop(0)
            self.sim.counters["connect_failures"] += 1
            raise errors.failed(reason)
        self.connected = True
        self.changed({"Connected": Variant("b", True)})

    async def _take_link(self, p) -> None:
        """A peripheral holds one link: while another adapter is connected to it, it does not advertise connectably,
        so this attempt gets no answer and ends as any unanswered LE connection does. If the other link ends first,
        the peripheral accepts this one (the attempt is still running)."""
        deadline = asyncio.get_running_loop().time() + UNANSWERED_CONNECT
        while p.link is not None and p.link is not self:
            if asyncio.get_running_loop().time() >= deadline:
                self.sim.counters["connect_refused_link_busy"] += 1
                raise errors.failed("le-connection-abort-by-local")
            await asyncio.sleep(LINK_POLL)
        p.link = self

    def _release_link(self) -> None:
        if self.peripheral.link is self:
            self.peripheral.link = None
            self.peripheral.link_down()

    async def disconnect(self) -> None:
        if self.connecting is not None:
            self.connecting.cancel()
        if self.connected:
            await self.drop_link("org.bluez.Reason.Local", "Connection terminated by local host")

    async def drop_link(self, reason: str, message: str) -> None:
        """Link loss in bluetoothd's order: ServicesResolved false, (5.83+) Disconnected, Connected false."""
        if self.connecting is not None:
            self.connecting.cancel()
        if not self.connected:
            return
        self.connected = False
        self._release_link()
        self.gatt.link_down()
        if self.services_resolved:
            self.services_resolved = False
            self.changed({"ServicesResolved": Variant("b", False)})
        if self.sim.version_tuple >= (5, 83):
            self.sim.emit_signal(self.path, Device1.name, "Disconnected", "ss", [reason, message])
        self.changed({"Connected": Variant("b", False)})
        self.sim.counters["disconnects"] += 1
        self.gatt.apply_cache_policy()
        await asyncio.sleep(0)

    @property
    def pairing(self) -> dict:
        """The peripheral's pairing behaviour (scenario `pairing`), read by the agent side."""
        return self.peripheral.pairing

    async def pair(self, sender: str | None = None) -> None:
        from . import agent

        if self.paired:
            raise errors.bluez_error("AlreadyExists", "Already Exists")
        if not self.connected:
            await self.connect()
        await agent.pair(self.sim, self, sender)
        self.paired = True
        changed = {"Paired": Variant("b", True)}
        if self.sim.version_tuple >= (5, 65):
            changed["Bonded"] = Variant("b", True)
        self.changed(changed)


class Device1(Interface):
    name = "org.bluez.Device1"
    writable = {"Alias": "s", "Trusted": "b", "Blocked": "b"}

    def __init__(self, device: Device) -> None:
        self.device = device

    @property
    def signals(self):  # only announced where bluetoothd has it
        return (("Disconnected", "ss"),) if self.device.sim.version_tuple >= (5, 83) else ()

    def get_properties(self) -> dict[str, Variant]:
        return self.device.get_properties()

    def write_property(self, msg: Message, prop: str, value):
        d = self.device
        if prop == "Alias":
            d.alias = value
            d.changed({"Alias": Variant("s", d.display_alias())})
        elif prop == "Trusted":
            d.trusted = value
            d.changed({"Trusted": Variant("b", value)})
        elif prop == "Blocked":
            d.blocked = value
            d.changed({"Blocked": Variant("b", value)})

    @method("", "")
    def Connect(self, msg: Message):
        return self.device.connect()

    @method("", "")
    def Disconnect(self, msg: Message):
        return self.device.disconnect()

    @method("s", "")
    def ConnectProfile(self, msg: Message, uuid: str):
        return self.device.connect()

    @method("s", "")
    def DisconnectProfile(self, msg: Message, uuid: str):
        return self.device.disconnect()

    @method("", "")
    def Pair(self, msg: Message):
        return self.device.pair(msg.sender)

    @method("", "")
    def CancelPairing(self, msg: Message):
        raise errors.does_not_exist()
