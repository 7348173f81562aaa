"""The remote central: a simulated phone connected to an adapter, driving the apps registered there.

Control interface org.gattway.Simulator1.Central at /org/gattway/simulator/central. Every ATT
outcome is returned as its error code (0 = success) so tests can check the app-error mapping.
Notifications and indications travel through a bounded per-connection link buffer drained at a
configurable rate, which is how a slow radio pushes back on the app.
"""
from __future__ import annotations

import json
from typing import Any

from dbus_fast import Message, Variant

from .central_link import DEFAULT_LINK_BUFFER, CentralLink
from .central_pairing import pair_central
from .control import control_error
from .interface import Interface, method
from .server_app import CCC_UUID, ServerCharacteristic, normalize_uuid

CENTRAL_PATH = "/org/gattway/simulator/central"
DEFAULT_MTU = 23  # BT_ATT_DEFAULT_LE_MTU: no exchange


class CentralDevice1(Interface):
    """The Device1 object bluetoothd creates for a central that connected to us (LE, temporary).

    Not faithful: bluetoothd keeps a temporary device about 30 s after the disconnect; here the
    object goes away with the link.
    """

    name = "org.bluez.Device1"

    def __init__(self, central: "RemoteCentral", link: CentralLink) -> None:
        self.central = central
        self.link = link
        self.connected = True

    def get_properties(self) -> dict[str, Variant]:
        link = self.link
        props = {
            "Address": Variant("s", link.address), "AddressType": Variant("s", "random"),
            "Alias": Variant("s", link.address.replace(":", "-")),
            "Paired": Variant("b", link.paired),
            "Trusted": Variant("b", link.trusted), "Blocked": Variant("b", False),
            "LegacyPairing": Variant("b", False), "Connected": Variant("b", self.connected),
            "UUIDs": Variant("as", []), "Adapter": Variant("o", f"/org/bluez/{link.adapter}"),
            "ServicesResolved": Variant("b", False),
        }
        if self.central.sim.version_tuple >= (5, 65):
            props["Bonded"] = Variant("b", False)
        return props

    @method("", "")
    def Disconnect(self, msg: Message) -> None:
        """The local side may drop a central's link, as with any connected device."""
        self.central.drop(self.link)


class RemoteCentral:
    def __init__(self, sim: Any, gatt: Any, advertising: Any) -> None:
        self.sim = sim
        self.gatt = gatt
        self.advertising = advertising
        self.links: dict[str, CentralLink] = {}
        self.signal_received = False
        self.iface = CentralControl(self)
        advertising.add_listener(self._power_check)  # told after every adapter power change

    def _power_check(self) -> None:
        """Powering an adapter off drops every link of the centrals connected to it."""
        for link in list(self.links.values()):
            adapter = self.sim.adapters.get(link.adapter)
            if adapter is None or not adapter.powered:
                self.drop(link)

    def install_control(self) -> None:
        self.sim.export_control(CENTRAL_PATH, self.iface)

    def reset(self) -> None:
        """bluetoothd stops: every link drops (without CCC callbacks; the apps are forgotten too)."""
        for link in list(self.links.values()):
            link.close()
            link.ccc.clear()
            if link in self.gatt.io.links:
                self.gatt.io.links.remove(link)
        self.links.clear()

    def attach_device(self, link: CentralLink) -> None:
        """Exports the central's Device1 unless a device object already has that path."""
        if self.sim.interface(link.device_path, CentralDevice1.name) is None:
            link.device_iface = CentralDevice1(self, link)
            self.sim.export(link.device_path, link.device_iface)

    def drop(self, link: CentralLink) -> None:
        """The link ends: CCCs cleared, then Connected=false and the object removed."""
        self.links.pop(link.address, None)
        self.gatt.io.link_closed(link)
        link.close()
        iface = link.device_iface
        if iface is not None and self.sim.interface(link.device_path, CentralDevice1.name) is iface:
            iface.connected = False
            iface.properties_changed({"Connected": Variant("b", False)})
            self.sim.unexport(link.device_path, CentralDevice1.name)
        link.device_iface = None

    def emit_received(self, address: str, uuid: str, value: bytes) -> None:
        bus = self.sim.control_bus
        if bus is not None:
            bus.send(Message.new_signal(CENTRAL_PATH, CentralControl.name, "Received", "ssay",
                                        [address, uuid, value]))

    def link(self, address: str) -> CentralLink:
        link = self.links.get(address.upper())
        if link is None:
            raise control_error(f"remote central {address} is not connected (Connect it first)")
        return link

    def characteristic(self, link: CentralLink, uuid: str) -> ServerCharacteristic:
        """By UUID (the first registered match) or as "handle:0x0012" (the value handle)."""
        if uuid.startswith("handle:"):
            try:
                handle = int(uuid[7:], 0)
            except ValueError:
                raise control_error(f"not a handle: {uuid!r}") from None
            chrc = next((c for a in self.gatt.apps if a.adapter == link.adapter and a.registered
                         for c in a.characteristics.values() if c.handle == handle), None)
            if chrc is None:
                raise control_error(f"no characteristic value handle 0x{handle:04x} on {link.adapter}")
            return chrc
        if normalize_uuid(uuid) is None:
            raise control_error(f"not a Bluetooth UUID: {uuid!r}")
        chrc = self.gatt.find_characteristic(link.adapter, uuid)
        if chrc is None:
            raise control_error(f"no registered application on {link.adapter} has characteristic {uuid}")
        return chrc

    def descriptor(self, link: CentralLink, char_uuid: str, desc_uuid: str) -> Any:
        chrc = self.characteristic(link, char_uuid)
        wanted = normalize_uuid(desc_uuid)
        desc = next((d for d in chrc.descriptors if d.uuid == wanted), None)
        if desc is None:
            raise control_error(f"characteristic {char_uuid} has no descriptor {desc_uuid}")
        return desc


class CentralControl(Interface):
    name = "org.gattway.Simulator1.Central"
    signals = (("Received", "ssay"),)

    def __init__(self, central: RemoteCentral) -> None:
        self.central = central

    @method("sa{sv}", "o")
    def Connect(self, msg: Message, address: str, options: dict) -> str:
        """options: adapter s (hci0), mtu q (23), encrypted b, trusted b, rate d, buffer u."""
        c = self.central
        adapter = options.get("adapter", Variant("s", "hci0")).value
        if adapter not in c.sim.adapters:
            raise control_error(f"unknown adapter {adapter!r}")
        if not c.sim.adapters[adapter].powered:
            raise control_error(f"adapter {adapter} is powered off")
        if address.upper() in c.links:
            raise control_error(f"remote central {address} is already connected")
        mtu = int(options.get("mtu", Variant("q", DEFAULT_MTU)).value)
        if not 23 <= mtu <= 517:
            raise control_error(f"ATT MTU {mtu} outside 23..517")
        link = CentralLink(c, adapter, address, mtu, bool(options.get("encrypted", Variant("b", False)).value),
                           bool(options.get("trusted", Variant("b", False)).value))
        link.set_rate(float(options.get("rate", Variant("d", 0.0)).value),
                      int(options.get("buffer", Variant("u", DEFAULT_LINK_BUFFER)).value))
        c.links[link.address] = link
        c.gatt.io.links.append(link)
        c.attach_device(link)
        c.sim.counters["central.connections"] += 1
        return link.device_path

    @method("s", "")
    def Disconnect(self, msg: Message, address: str) -> None:
        c = self.central
        c.drop(c.link(address))

    @method("ssa{sv}", "")
    async def PairCentral(self, msg: Message, address: str, kind: str, options: dict) -> None:
        """Pairs as the remote would (central_pairing.py): kind just-works | confirm | display | passkey;
        options: passkey u (123456), entered u (the passkey). Approved: the link is encrypted."""
        link = self.central.link(address)
        passkey = int(options.get("passkey", Variant("u", 123456)).value)
        entered = int(options.get("entered", Variant("u", passkey)).value)
        await pair_central(self.central.sim, link, kind, passkey, entered)

    @method("ssq", "yay")
    async def ReadValue(self, msg: Message, address: str, uuid: str, offset: int):
        c = self.central
        link = c.link(address)
        return await c.gatt.io.read(link, c.characteristic(link, uuid), offset)

    @method("ss", "yay")
    async def ReadLongValue(self, msg: Message, address: str, uuid: str):
        c = self.central
        link = c.link(address)
        return await c.gatt.io.read_long(link, c.characteristic(link, uuid))

    @method("ssaysq", "y")
    async def WriteValue(self, msg: Message, address: str, uuid: str, value: bytes, kind: str, offset: int):
        """kind: request | command | prepared | reliable."""
        if kind not in ("request", "command", "prepared", "reliable"):
            raise control_error(f"unknown write kind {kind!r} (request, command, prepared, reliable)")
        c = self.central
        link = c.link(address)
        if kind == "command" and len(value) > link.mtu - 3:
            raise control_error(f"a Write Command carries at most MTU-3 = {link.mtu - 3} bytes")
        return await c.gatt.io.write(link, c.characteristic(link, uuid), bytes(value), kind, offset)

    @method("sssq", "yay")
    async def ReadDescriptor(self, msg: Message, address: str, uuid: str, desc_uuid: str, offset: int):
        c = self.central
        link = c.link(address)
        if normalize_uuid(desc_uuid) == CCC_UUID:  # bluetoothd serves the CCC itself, per device
            chrc = c.characteristic(link, uuid)
            if not chrc.ccc_handle:
                raise control_error(f"characteristic {uuid} has no CCC descriptor")
            return 0, link.ccc.get(chrc, 0).to_bytes(2, "little")[offset:]
        return await c.gatt.io.read(link, c.descriptor(link, uuid, desc_uuid), offset)

    @method("sssay", "y")
    async def WriteDescriptor(self, msg: Message, address: str, uuid: str, desc_uuid: str, value: bytes):
        c = self.central
        link = c.link(address)
        if normalize_uuid(desc_uuid) == CCC_UUID:
            if len(value) != 2:
                return 0x0D  # a CCC value is two octets
            return await c.gatt.io.write_ccc(link, c.characteristic(link, uuid), int.from_bytes(value, "little"))
        return await c.gatt.io.write(link, c.descriptor(link, uuid, desc_uuid), bytes(value), "request")

    @method("ssq", "y")
    async def WriteCCC(self, msg: Message, address: str, uuid: str, value: int):
        """Writes the Client Characteristic Configuration: 0 off, 1 notify, 2 indicate."""
        c = self.central
        link = c.link(address)
        return await c.gatt.io.write_ccc(link, c.characteristic(link, uuid), value)

    @method("sdu", "")
    def SetLinkDrainRate(self, msg: Message, address: str, rate: float, buffer: int) -> None:
        """rate: notifications/s leaving the link (0 = unlimited); buffer: link buffer capacity."""
        self.central.link(address).set_rate(rate, buffer)

    @method("ssu", "aay")
    def GetReceived(self, msg: Message, address: str, uuid: str, limit: int):
        """Drains up to `limit` (0 = all) received values of a characteristic, oldest first."""
        c = self.central
        wanted = normalize_uuid(uuid)
        if wanted is None:
            raise control_error(f"not a Bluetooth UUID: {uuid!r}")
        return c.link(address).take(wanted, limit)

    @method("ssu", "a(tay)")
    def GetReceivedStamped(self, msg: Message, address: str, uuid: str, limit: int):
        """Like GetReceived, each value with the CLOCK_MONOTONIC ns at which the central received it (for latency
        measurements without a D-Bus hop per value)."""
        c = self.central
        wanted = normalize_uuid(uuid)
        if wanted is None:
            raise control_error(f"not a Bluetooth UUID: {uuid!r}")
        return [list(item) for item in c.link(address).take_stamped(wanted, limit)]

    @method("b", "")
    def SetAcquireNotify(self, msg: Message, enabled: bool) -> None:
        """False: later CCC enables subscribe a local characteristic with StartNotify although it exposes
        NotifyAcquired, as bluetoothd before 5.48 does; True (the default): the version's rule."""
        self.central.gatt.io.acquire_notify = enabled

    @method("s", "a{sv}")
    def GetLinkStats(self, msg: Message, address: str):
        link = self.central.link(address)
        out = {k: Variant("t", v) for k, v in link.stats.items()}
        out["buffered"] = Variant("u", len(link.buffer))
        out["mtu"] = Variant("q", link.mtu)
        out["subscriptions"] = Variant("a{sq}", {c.uuid: v for c, v in link.ccc.items()})
        return out

    @method("b", "")
    def SetReceivedSignal(self, msg: Message, enabled: bool) -> None:
        self.central.signal_received = enabled

    @method("", "s")
    def GetApplications(self, msg: Message) -> str:
        return json.dumps([a.describe() for a in self.central.gatt.apps if a.registered])

    @method("", "s")
    def GetAgents(self, msg: Message) -> str:
        """The registered agents: [{owner, path, capability, default}], the default agent first."""
        manager = self.central.sim.server_side.agents
        ordered = manager.defaults + [a for a in manager.agents.values() if a not in manager.defaults]
        return json.dumps([{"owner": a.owner, "path": a.path, "capability": a.capability,
                            "default": bool(manager.defaults) and a is manager.defaults[0]} for a in ordered])

    @method("", "s")
    def GetAdvertisements(self, msg: Message) -> str:
        return json.dumps([a.describe() for a in self.central.advertising.adverts if a.registered])

    @method("y", "")
    def SetSupportedInstances(self, msg: Message, count: int) -> None:
        if not 1 <= count <= 32:
            raise control_error("advertising instances must be 1..32")
        self.central.advertising.max_instances = count
