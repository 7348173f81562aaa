"""The air between the simulated controllers: what one adapter advertises, every other one sees.

While an advertisement registered on hci0 is on air, hci1 finds a remote device with hci0's address
carrying that advertisement's data, and connecting to it from hci1 reaches the GATT applications
registered on hci0 (and the same the other way round). The remote device is a VirtualPeripheral
(A's model) whose characteristics use MirrorBehaviour: reads and writes become the app's
ReadValue/WriteValue through bluetoothd's server path (server_io), CCC writes become
StartNotify/AcquireNotify, and the app's notifications reach the hci1 client through the
peripheral's notify path. So a stock client such as bleak on hci1 talks to an app on hci0.

Limits: the GATT mirror is rebuilt only while nobody is connected (a real device would send
Service Changed); descriptor values are copied when the mirror is built, writes to them stay local.
"""
from __future__ import annotations

import asyncio
import logging
from typing import Any

from .errors import AttError
from .server_app import (PROP_AUTH, PROP_BROADCAST, PROP_EXT, PROP_INDICATE, PROP_NOTIFY, PROP_READ, PROP_WRITE,
                         PROP_WRITE_WITHOUT_RESP, ServerCharacteristic)

log = logging.getLogger("bluezsim.air")

MIRROR_MTU = 247  # what the mirrored link negotiates (a typical modern phone/controller)
BASE_FLAGS = ((PROP_BROADCAST, "broadcast"), (PROP_READ, "read"), (PROP_WRITE_WITHOUT_RESP, "write-without-response"),
              (PROP_WRITE, "write"), (PROP_NOTIFY, "notify"), (PROP_INDICATE, "indicate"),
              (PROP_AUTH, "authenticated-signed-writes"), (PROP_EXT, "extended-properties"))


def client_flags(chrc: ServerCharacteristic) -> list[str]:
    """The properties a remote client discovers (security flags reduce to their base property)."""
    flags = [name for bit, name in BASE_FLAGS if chrc.properties & bit]
    if chrc.ext_properties & 0x01:
        flags.append("reliable-write")
    if chrc.ext_properties & 0x02:
        flags.append("writable-auxiliaries")
    return flags


class MirrorLink:
    """The hci1 controller as a connected central of the hci0 apps (a `link` of server_io)."""

    def __init__(self, mirror: "Mirror", central_adapter: Any, server_adapter: str) -> None:
        self.mirror = mirror
        self.address = central_adapter.address
        self.device_path = f"/org/bluez/{server_adapter}/dev_{self.address.replace(':', '_')}"
        self.mtu = MIRROR_MTU
        self.encrypted = False
        self.trusted = False
        self.ccc: dict[ServerCharacteristic, int] = {}

    def has_room(self) -> bool:
        return True  # the client-side notify path applies its own (drop-on-EAGAIN) rules

    def offer(self, chrc: ServerCharacteristic, value: bytes, indicate: bool) -> bool:
        model = self.mirror.models.get(chrc)
        delivered = bool(model is not None and model.notify_now(value))
        if indicate and delivered:
            self.mirror.io.confirm(chrc)  # bluetoothd on hci1 confirms each indication
        return delivered


class MirrorBehaviour:
    """A characteristic of the remote device that forwards to an app characteristic."""

    def __init__(self, mirror: "Mirror", chrc: ServerCharacteristic) -> None:
        self.mirror = mirror
        self.chrc = chrc
        self.char: Any = None

    def bind(self, char: Any) -> None:
        self.char = char
        self.mirror.models[self.chrc] = char

    async def read(self, offset: int) -> bytes:
        code, value = await self.mirror.io.read(self.mirror.link, self.chrc, offset, truncate=False)
        if code:
            raise AttError(code)
        return value

    async def write(self, value: bytes, offset: int, kind: str) -> None:
        code = await self.mirror.io.write(self.mirror.link, self.chrc, value, kind, offset)
        if code:
            raise AttError(code)

    async def subscribed(self, enabled: bool, indicate: bool) -> None:
        code = await self.mirror.io.write_ccc(self.mirror.link, self.chrc, (2 if indicate else 1) if enabled else 0)
        if code:
            raise AttError(code)


class Mirror:
    """The remote device one adapter shows for the other adapter's advertisement and apps."""

    def __init__(self, air: "Air", server: str, central: str) -> None:
        self.air = air
        self.server = server
        self.central = central
        self.io = air.gatt.io
        self.peripheral: Any = None
        self.gatt_key: Any = None
        self.models: dict[ServerCharacteristic, Any] = {}
        self.link: MirrorLink | None = None

    def connected(self) -> bool:
        if self.peripheral is None:
            return False
        dev = self.air.sim.device_for(self.peripheral)
        return bool(dev is not None and (dev.connected or getattr(dev, "connecting", False)))

    async def update(self) -> None:
        sim = self.air.sim
        adapters = sim.adapters
        if self.server not in adapters or self.central not in adapters:
            return
        adverts = self.air.advertising.on_air(self.server)
        if not adverts:
            await self.remove()
            return
        advert = adverts[0]
        apps = [a for a in self.air.gatt.apps if a.adapter == self.server and a.registered]
        chars = [c for a in apps for s in a.services for c in s.characteristics]
        gatt_key = tuple((c.path, c.uuid, tuple(c.flags)) for c in chars)
        if self.peripheral is not None and (gatt_key == self.gatt_key or self.connected()):
            self.peripheral.update_advert(advert_spec(advert))
            return
        await self.remove()
        self.link = MirrorLink(self, adapters[self.central], self.server)
        self.io.links.append(self.link)
        self.models = {}
        behaviours: dict[str, Any] = {}
        services = []
        for app in apps:
            for s in app.services:
                entries = []
                for c in s.characteristics:
                    behaviours[c.uuid] = MirrorBehaviour(self, c)
                    descriptors = []
                    for d in c.descriptors:
                        # Descriptor values are copied once (the mirror has no descriptor behaviour).
                        code, value = await self.io.read(self.link, d, 0, truncate=False)
                        descriptors.append({"uuid": d.uuid, "flags": _desc_flags(d.flags),
                                            "value": value if code == 0 else b""})
                    entries.append({"uuid": c.uuid, "flags": client_flags(c), "descriptors": descriptors})
                services.append({"uuid": s.uuid, "primary": s.primary, "characteristics": entries})
        spec = {"address": adapters[self.server].address, "connectable": advert.type == "peripheral",
                "advert": advert_spec(advert), "gatt": services, "mtu": MIRROR_MTU, "behaviours": behaviours}
        try:
            self.peripheral = sim.add_peripheral(spec, adapter=self.central)
        except ValueError as e:
            log.warning("cannot show %s's advertisement on %s: %s", self.server, self.central, e)
            self._drop_link()
            return
        self.gatt_key = gatt_key
        self._watch_link(self.peripheral)
        sim.counters["air.mirrors_built"] += 1

    def _watch_link(self, peripheral: Any) -> None:
        """When hci1's link to the mirror drops, the hci0 server clears that central's CCCs."""
        original = peripheral.link_down

        def link_down() -> None:
            original()
            if self.link is not None and self.peripheral is peripheral:
                self.io.link_closed(self.link)
                self.io.links.append(self.link)  # the same central may connect again

        peripheral.link_down = link_down

    def _drop_link(self) -> None:
        if self.link is not None:
            self.io.link_closed(self.link)
            self.link = None

    async def remove(self) -> None:
        p, self.peripheral = self.peripheral, None
        self.gatt_key = None
        self._drop_link()
        if p is not None:
            await self.air.sim.remove_peripheral(p)

    def forget(self) -> None:
        """bluetoothd stops: the mirror vanishes without touching the (gone) bus."""
        p, self.peripheral = self.peripheral, None
        self.gatt_key = None
        if self.link is not None:
            self.link.ccc.clear()
            if self.link in self.io.links:
                self.io.links.remove(self.link)
            self.link = None
        if p is not None:
            p.present = False
            self.air.sim.peripherals.pop(f"{p.adapter_name}/{p.address}", None)


def _desc_flags(flags: list[str]) -> list[str]:
    out = []
    for f in flags:
        base = "read" if f.endswith("read") else "write" if f.endswith("write") else None
        if base and base not in out:
            out.append(base)
    return out or ["read"]


def advert_spec(advert: Any) -> dict:
    """An advertisement as a scenario-style advert spec for the receiving side."""
    spec: dict[str, Any] = {
        "uuids": list(advert.service_uuids),
        "manufacturer_data": dict(advert.manufacturer_data),
        "service_data": dict(advert.service_data),
        "name": advert.on_air_name(),
        "flags": advert.adv_bytes[2] if advert.adv_bytes[:2] == b"\x02\x01" else None,
    }
    if "tx-power" in advert.includes or advert.tx_power is not None:
        spec["tx_power"] = advert.tx_power if advert.tx_power is not None else 0
    if advert.appearance is not None or "appearance" in advert.includes:
        spec["appearance"] = advert.appearance or 0
    return spec


class Air:
    def __init__(self, sim: Any, gatt: Any, advertising: Any) -> None:
        self.sim = sim
        self.gatt = gatt
        self.advertising = advertising
        # Every adapter hears every other adapter's advertisements: one mirror per ordered pair.
        self.mirrors = [Mirror(self, server, central) for server in sim.adapter_names for central in sim.adapter_names
                        if server != central]
        self.pending = False
        self.lock = asyncio.Lock()  # one rebuild at a time: a rebuild awaits the apps
        gatt.add_listener(lambda _app, _event: self.schedule())
        advertising.add_listener(self.schedule)

    def install(self) -> None:
        self.schedule()

    def schedule(self) -> None:
        """Coalesces bursts of changes into one update of every mirror."""
        if self.pending or self.sim.bus is None:
            return
        self.pending = True
        self.sim.spawn(self._update())

    async def _update(self) -> None:
        async with self.lock:
            self.pending = False
            for mirror in self.mirrors:
                await mirror.update()

    def reset(self) -> None:
        for mirror in self.mirrors:
            mirror.forget()
