"""org.bluez.Adapter1 (src/adapter.c): power state machine, discovery entry points, RemoveDevice."""
from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from dbus_fast import Message, Variant

from . import errors
from .discovery import Discovery
from .interface import Interface, method

if TYPE_CHECKING:
    from .core import Simulator
    from .device import Device

ADAPTER_UUIDS = [
    "00001801-0000-1000-8000-00805f9b34fb",  # Generic Attribute
    "00001800-0000-1000-8000-00805f9b34fb",  # Generic Access
    "0000110e-0000-1000-8000-00805f9b34fb",  # A/V Remote Control
    "0000110c-0000-1000-8000-00805f9b34fb",  # A/V Remote Control Target
    "0000180a-0000-1000-8000-00805f9b34fb",  # Device Information
]


DEFAULT_ADAPTERS = ("hci0", "hci1")
MAX_ADAPTERS = 16  # bounds the air's mirrors (one per ordered pair of adapters)


def parse_adapter_names(names: Any) -> list[str]:
    """Adapter names as given by a scenario or the command line: distinct `hciN`, 1 to MAX_ADAPTERS of them."""
    out: list[str] = []
    for name in names:
        if not isinstance(name, str) or not name.startswith("hci") or not name[3:].isdigit() \
                or int(name[3:]) > 255 or name != f"hci{int(name[3:])}":
            raise ValueError(f"not an adapter name: {name!r} (expected hciN, N from 0 to 255)")
        if name in out:
            raise ValueError(f"adapter {name} given twice")
        out.append(name)
    if not 1 <= len(out) <= MAX_ADAPTERS:
        raise ValueError(f"between 1 and {MAX_ADAPTERS} adapters, not {len(out)}")
    return out


def adapter_address(index: int) -> str:
    """hci0 00:AA:01:00:00:00, hci1 00:AA:01:01:00:01, hci2 00:AA:01:02:00:02, …"""
    return f"00:AA:01:{index:02X}:00:{index:02X}"


class Adapter:
    """One local controller. `name` is "hciN"; the D-Bus face is `self.iface` (Adapter1)."""

    def __init__(self, sim: "Simulator", index: int, address: str) -> None:
        self.sim = sim
        self.index = index
        self.name = f"hci{index}"
        self.path = f"/org/bluez/hci{index}"
        self.address = address
        self.powered = True
        self.power_state = "on"
        self.alias = ""
        self.discoverable = False
        self.discoverable_timeout = 180
        self.pairable = True
        self.pairable_timeout = 0
        self.devices: dict[str, "Device"] = {}  # address -> Device
        self.discovery = Discovery(self)

        self.iface = Adapter1(self)

    def export_all(self) -> None:
        self.sim.export(self.path, self.iface)

    def properties_changed(self, changed: dict[str, Variant], invalidated: list[str] | None = None) -> None:
        self.sim.emit_properties_changed(self.path, Adapter1.name, changed, invalidated)

    def shutdown(self) -> None:
        """bluetoothd stops: forget all per-process state (nothing is signalled, the name vanishes)."""
        self.discovery.shutdown()
        for dev in list(self.devices.values()):
            dev.shutdown()
        self.devices.clear()

    def get_properties(self) -> dict[str, Variant]:
        system_name = f"gattway-sim #{self.index + 1}"
        return {
            "Address": Variant("s", self.address),
            "AddressType": Variant("s", "public"),
            "Name": Variant("s", system_name),
            "Alias": Variant("s", self.alias or system_name),
            "Class": Variant("u", 0x7C010C),
            "Powered": Variant("b", self.powered),
            "PowerState": Variant("s", self.power_state),
            "Discoverable": Variant("b", self.discoverable),
            "DiscoverableTimeout": Variant("u", self.discoverable_timeout),
            "Pairable": Variant("b", self.pairable),
            "PairableTimeout": Variant("u", self.pairable_timeout),
            "Discovering": Variant("b", self.discovery.discovering),
            "UUIDs": Variant("as", ADAPTER_UUIDS),
            "Modalias": Variant("s", "usb:v1D6Bp0246d0542"),
            "Roles": Variant("as", ["central", "peripheral"]),
        }

    def write_property(self, prop: str, value):
        if prop == "Powered":
            return self.set_powered(value)
        if prop == "Alias":
            self.alias = value
            self.properties_changed({"Alias": Variant("s", value or self.get_properties()["Name"].value)})
        elif prop == "Discoverable":
            if not self.powered:
                raise errors.not_ready()
            self.discoverable = value
            self.properties_changed({"Discoverable": Variant("b", value)})
        elif prop == "Pairable":
            self.pairable = value
            self.properties_changed({"Pairable": Variant("b", value)})
        elif prop == "DiscoverableTimeout":
            self.discoverable_timeout = value
            self.properties_changed({"DiscoverableTimeout": Variant("u", value)})
        elif prop == "PairableTimeout":
            self.pairable_timeout = value
            self.properties_changed({"PairableTimeout": Variant("u", value)})
        return None

    async def set_powered(self, on: bool) -> None:
        """Power transition as bluetoothd reports it: PowerState passes through *-enabling/-disabling."""
        if on == self.powered:
            return
        if on:
            self.power_state = "off-enabling"
            self.properties_changed({"PowerState": Variant("s", "off-enabling")})
            await asyncio.sleep(0.01)
            self.powered = True
            self.power_state = "on"
            self.properties_changed({"Powered": Variant("b", True), "PowerState": Variant("s", "on")})
        else:
            self.power_state = "on-disabling"
            self.properties_changed({"PowerState": Variant("s", "on-disabling")})
            for dev in list(self.devices.values()):
                await dev.drop_link("org.bluez.Reason.Local", "le-connection-abort-by-local")
            self.discovery.power_off()
            await asyncio.sleep(0.01)
            self.powered = False
            self.power_state = "off"
            self.properties_changed({"Powered": Variant("b", False), "PowerState": Variant("s", "off")})

    async def remove_device_path(self, path: str) -> None:
        """remove_device(): DoesNotExist is checked before NotReady."""
        dev = next((d for d in self.devices.values() if d.path == path), None)
        if dev is None:
            raise errors.does_not_exist()
        if not self.powered:
            raise errors.not_ready()
        if dev.connected or dev.connecting:
            await dev.drop_link("org.bluez.Reason.Local", "le-connection-abort-by-local")
        self.remove_device(dev)

    def remove_device(self, dev: "Device") -> None:
        dev.remove_objects()
        self.devices.pop(dev.address, None)


class Adapter1(Interface):
    name = "org.bluez.Adapter1"
    writable = {"Powered": "b", "Alias": "s", "Discoverable": "b", "Pairable": "b",
                "DiscoverableTimeout": "u", "PairableTimeout": "u"}

    def __init__(self, adapter: Adapter) -> None:
        self.adapter = adapter

    def get_properties(self) -> dict[str, Variant]:
        return self.adapter.get_properties()

    def write_property(self, msg: Message, prop: str, value):
        return self.adapter.write_property(prop, value)

    @method("", "")
    def StartDiscovery(self, msg: Message):
        return self.adapter.discovery.start(msg.sender)

    @method("", "")
    def StopDiscovery(self, msg: Message):
        return self.adapter.discovery.stop(msg.sender)

    @method("a{sv}", "")
    def SetDiscoveryFilter(self, msg: Message, props: dict):
        return self.adapter.discovery.set_filter(msg.sender, props)

    @method("", "as")
    def GetDiscoveryFilters(self, msg: Message):
        return ["UUIDs", "RSSI", "Pathloss", "Transport", "DuplicateData", "Discoverable", "Pattern"]

    @method("o", "")
    def RemoveDevice(self, msg: Message, path: str):
        return self.adapter.remove_device_path(path)
