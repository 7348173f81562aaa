"""bluetoothd's view of a remote GATT server (src/gatt-client.c): GattService1, GattCharacteristic1 and
GattDescriptor1 objects under the device, link-up discovery and the cache policy."""
from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from dbus_fast import Variant

from . import errors
from .gatt_char import RemoteCharacteristic
from .gatt_db import CCC_UUID
from .interface import Interface, method

if TYPE_CHECKING:
    from .device import Device
    from .gatt_db import DescModel, ServiceModel

LOCAL_MTU = 517  # BT_ATT_MAX_LE_MTU: what bluetoothd offers in the MTU exchange


class RemoteService(Interface):
    name = "org.bluez.GattService1"

    def __init__(self, device: "Device", model: "ServiceModel") -> None:
        self.device = device
        self.model = model
        self.path = f"{device.path}/service{model.handle:04x}"

    def get_properties(self) -> dict[str, Variant]:
        p = {
            "UUID": Variant("s", self.model.uuid),
            "Device": Variant("o", self.device.path),
            "Primary": Variant("b", self.model.primary),
            "Includes": Variant("ao", []),
        }
        if self.device.sim.version_tuple >= (5, 69):  # Handle on client objects since 5.69
            p["Handle"] = Variant("q", self.model.handle)
        return p


class RemoteDescriptor(Interface):
    name = "org.bluez.GattDescriptor1"

    def __init__(self, char: RemoteCharacteristic, model: "DescModel") -> None:
        self.char = char
        self.model = model
        self.path = f"{char.path}/desc{model.handle:04x}"
        self.value: bytes | None = None  # absent until read (descriptor_value_exists)

    def get_properties(self) -> dict[str, Variant]:
        p = {
            "UUID": Variant("s", self.model.uuid),
            "Characteristic": Variant("o", self.char.path),
        }
        if self.value is not None:
            p["Value"] = Variant("ay", self.value)
        if self.char.sim.version_tuple >= (5, 69):
            p["Handle"] = Variant("q", self.model.handle)
        return p

    @method("a{sv}", "ay")
    async def ReadValue(self, msg, options):
        self.char.require_connected()
        self.value = await self.char._att(self._read())
        self.properties_changed({"Value": Variant("ay", self.value)})
        return self.value

    async def _read(self) -> bytes:
        return bytes(self.model.value)

    @method("aya{sv}", "")
    async def WriteValue(self, msg, value, options):
        self.char.require_connected()
        if self.model.uuid == CCC_UUID:  # CCC writes go through StartNotify/StopNotify only
            raise errors.not_permitted("Write not permitted")
        await self.char._att(self._write(bytes(value)))

    async def _write(self, value: bytes) -> None:
        self.model.value = bytearray(value)


class GattClient:
    """The per-device GATT client: objects survive disconnects under the default Cache=always."""

    def __init__(self, device: "Device") -> None:
        self.device = device
        self.sim = device.sim
        self.services: list[RemoteService] = []
        self.chars: list[RemoteCharacteristic] = []
        self.descs: list[RemoteDescriptor] = []
        self.mtu = 0  # 0 = no exchange on the current link
        self.link_lost: asyncio.Future | None = None  # resolved when the current link goes down

    async def link_up(self) -> None:
        """After the ATT link is up: MTU exchange, discovery (or cache reuse), then ServicesResolved."""
        dev = self.device
        p = dev.peripheral
        self.link_lost = asyncio.get_running_loop().create_future()
        await asyncio.sleep(p.discovery_delay / 2)
        if not dev.connected:
            return
        self.mtu = max(23, min(LOCAL_MTU, p.mtu))
        if self.chars:
            for char in self.chars:
                char.link_up()
        else:
            await asyncio.sleep(p.discovery_delay / 2)
            if not dev.connected:
                return
            self._export_tree()
        uuids = [s.model.uuid for s in self.services if s.model.primary and s.model.uuid not in dev.uuids]
        if uuids:
            dev.uuids.extend(uuids)
            dev.changed({"UUIDs": Variant("as", list(dev.uuids))})
        # Notification sessions made while disconnected subscribe now (gatt-client.c register_notify).
        for char in self.chars:
            await char.resubscribe()
        if dev.connected:
            dev.services_resolved = True
            dev.changed({"ServicesResolved": Variant("b", True)})

    def _export_tree(self) -> None:
        dev = self.device
        for model in dev.peripheral.services:
            svc = RemoteService(dev, model)
            self.services.append(svc)
            self.sim.export(svc.path, svc)
            for cmodel in model.characteristics:
                char = RemoteCharacteristic(self, svc, cmodel)
                self.chars.append(char)
                char.link_up(announce=False)
                self.sim.export(char.path, char)
                for dmodel in cmodel.descriptors:
                    desc = RemoteDescriptor(char, dmodel)
                    self.descs.append(desc)
                    self.sim.export(desc.path, desc)

    def link_down(self) -> None:
        self.mtu = 0
        if self.link_lost is not None and not self.link_lost.done():
            self.link_lost.set_result(None)
        for char in self.chars:
            char.link_down()

    def close_sockets(self) -> None:
        for char in self.chars:
            char.close_sockets()

    def apply_cache_policy(self) -> None:
        mode = self.sim.gatt_cache
        if mode == "always" or (mode == "yes" and self.device.paired):
            return
        self.remove_all()

    def remove_all(self) -> None:
        for char in self.chars:
            char.forget()
        for obj in reversed(self.descs + self.chars + self.services):  # type: ignore[operator]
            self.sim.unexport(obj.path)
        self.services, self.chars, self.descs = [], [], []
