"""org.bluez.LEAdvertisingManager1 (src/advertising.c of BlueZ 5.66) on a legacy-advertising controller.

Registration reads the app's LEAdvertisement1 properties, parses them in bluetoothd's parser order
(so e.g. `Includes: ["local-name"]` plus `LocalName` fails exactly as there), builds the advertising
data with bt_ad's layout and checks it against calc_max_adv_len() of a 31-byte controller. The
result is what hci1 sees on the air (air.py) and what the control interface reports.

Power off does not drop advertisements in 5.66 (the kernel keeps its instances and re-enables them
on power on); they go off air only. Release() is sent when bluetoothd stops (adapter removal),
when `Timeout` expires, and when the instance is otherwise dropped by bluetoothd.
"""
from __future__ import annotations

import asyncio
import logging
from typing import Any

from dbus_fast import Message, MessageType, Variant

from . import errors
from .advert_data import (ADVERTISEMENT, MAX_ADV_LEN, PROPERTIES, SUPPORTED_INCLUDES, SUPPORTED_INSTANCES,
                          Advertisement)
from .interface import Interface, method
from .server_app import AppCallError, call_app, remove_match, send_app_noreply

log = logging.getLogger("bluezsim.advertising")


class LEAdvertisingManager1(Interface):
    name = "org.bluez.LEAdvertisingManager1"

    def __init__(self, manager: "AdvertisingManager", adapter: Any) -> None:
        self.manager = manager
        self.adapter = adapter

    def get_properties(self) -> dict[str, Variant]:
        active = len(self.manager.for_adapter(self.adapter.name))
        return {
            "ActiveInstances": Variant("y", active),
            "SupportedInstances": Variant("y", self.manager.max_instances - active),
            "SupportedIncludes": Variant("as", list(SUPPORTED_INCLUDES)),
            "SupportedCapabilities": Variant("a{sv}", {"MaxAdvLen": Variant("y", MAX_ADV_LEN),
                                                       "MaxScnRspLen": Variant("y", MAX_ADV_LEN)}),
            "SupportedFeatures": Variant("as", []),
        }

    @method("oa{sv}", "")
    async def RegisterAdvertisement(self, msg: Message, path: str, options: dict) -> None:
        await self.manager.register(self.adapter, msg.sender, path)

    @method("o", "")
    def UnregisterAdvertisement(self, msg: Message, path: str) -> None:
        self.manager.unregister(self.adapter, msg.sender, path)


class AdvertisingManager:
    def __init__(self, sim: Any) -> None:
        self.sim = sim
        self.max_instances = SUPPORTED_INSTANCES
        self.adverts: list[Advertisement] = []
        self.ifaces: dict[str, LEAdvertisingManager1] = {}
        self._listeners: list[Any] = []  # called with no argument whenever what is on air changes

    def add_listener(self, fn: Any) -> None:
        self._listeners.append(fn)

    def changed(self) -> None:
        for fn in list(self._listeners):
            try:
                fn()
            except Exception:  # a faulty listener must not break advertising
                log.exception("advertising listener failed")

    def install_adapter(self, adapter: Any) -> None:
        iface = LEAdvertisingManager1(self, adapter)
        self.ifaces[adapter.name] = iface
        self.sim.export(adapter.path, iface)
        self._watch_power(adapter)

    def _watch_power(self, adapter: Any) -> None:
        """Adapter exposes no power hook, so wrap set_powered: adverts go off/on air with the power."""
        original = adapter.set_powered

        async def set_powered(on: bool) -> None:
            await original(on)
            self.changed()

        adapter.set_powered = set_powered

    def for_adapter(self, name: str) -> list[Advertisement]:
        return [a for a in self.adverts if a.adapter.name == name]

    def on_air(self, adapter_name: str) -> list[Advertisement]:
        return [a for a in self.adverts if a.adapter.name == adapter_name and a.registered and a.adapter.powered]

    def _instances_changed(self, adapter: Any) -> None:
        iface = self.ifaces.get(adapter.name)
        if iface is not None:
            props = iface.get_properties()
            iface.properties_changed({k: props[k] for k in ("ActiveInstances", "SupportedInstances")})

    async def register(self, adapter: Any, owner: str, path: str) -> None:
        if any(a.owner == owner and a.path == path and a.adapter is adapter for a in self.adverts):
            raise errors.bluez_error("AlreadyExists", "Already Exists")
        used = {a.instance for a in self.for_adapter(adapter.name)}
        instance = next((i for i in range(1, self.max_instances + 1) if i not in used), 0)
        if not instance:
            raise errors.not_permitted("Maximum advertisements reached")
        advert = Advertisement(owner, path, adapter, instance)
        self.adverts.append(advert)
        try:
            rule = (f"type='signal',sender='{owner}',path='{path}',"
                    f"interface='{PROPERTIES}',member='PropertiesChanged'")
            await self.sim._add_match(rule)
            advert.match_rule = rule
            try:
                reply = await call_app(self.sim.bus, owner, path, PROPERTIES, "GetAll", "s", [ADVERTISEMENT])
            except AppCallError as e:
                # g_dbus_proxy_new() never sees the object: bluetoothd keeps the call pending until
                # the client leaves; here the caller's own timeout ends it.
                log.info("advertisement %s unreadable: %s", path, e)
                await advert.gone.wait()
                raise errors.failed("Failed to complete registration") from None
            if advert not in self.adverts:
                raise errors.failed("Failed to complete registration")
            advert.parse_all(reply.body[0])
        except BaseException:
            self._drop(advert, release=False)
            raise
        advert.registered = True
        if advert.timeout:
            advert.timeout_task = self.sim.spawn(self._expire(advert))
        self.sim.counters["advertising.registered"] += 1
        self._instances_changed(adapter)
        self.changed()

    async def _expire(self, advert: Advertisement) -> None:
        await asyncio.sleep(advert.timeout)
        advert.timeout_task = None
        self._drop(advert, release=True)

    def unregister(self, adapter: Any, owner: str, path: str) -> None:
        advert = next((a for a in self.adverts if a.owner == owner and a.path == path and a.adapter is adapter),
                      None)
        if advert is None:
            raise errors.does_not_exist()
        self._drop(advert, release=False)

    def _drop(self, advert: Advertisement, release: bool) -> None:
        if advert not in self.adverts:
            return
        self.adverts.remove(advert)
        advert.gone.set()
        if advert.match_rule is not None:
            remove_match(self.sim.bus, advert.match_rule)
            advert.match_rule = None
        if advert.timeout_task is not None:
            advert.timeout_task.cancel()
            advert.timeout_task = None
        if release and self.sim.bus is not None:
            send_app_noreply(self.sim.bus, advert.owner, advert.path, ADVERTISEMENT, "Release")
            self.sim.counters["advertising.released"] += 1
        advert.registered = False
        self._instances_changed(advert.adapter)
        self.changed()

    def client_left(self, owner: str) -> None:
        for advert in [a for a in self.adverts if a.owner == owner]:
            self._drop(advert, release=False)

    def reset(self) -> None:
        """bluetoothd stops: btd_adv_manager_destroy() releases every advertisement."""
        for advert in list(self.adverts):
            self._drop(advert, release=True)

    def on_message(self, msg: Message) -> bool:
        """properties_changed(): a changed property is re-parsed and the advertisement refreshed."""
        if msg.message_type is not MessageType.SIGNAL or msg.member != "PropertiesChanged" \
                or msg.interface != PROPERTIES or not msg.body or msg.body[0] != ADVERTISEMENT:
            return False
        for advert in self.adverts:
            if advert.owner == msg.sender and advert.path == msg.path and advert.registered:
                changed, invalidated = msg.body[1], msg.body[2]
                updates = [(k, v) for k, v in changed.items()] + [(k, None) for k in invalidated]
                for name, value in updates:
                    if name in Advertisement.PARSERS and advert.apply(name, value):
                        if not advert.refresh():
                            self.sim.counters["advertising.refresh_failed"] += 1
                self.sim.counters["advertising.updates"] += 1
                self.changed()
        return False
