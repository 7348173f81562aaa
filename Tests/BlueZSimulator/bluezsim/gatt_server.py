"""bluetoothd's local GATT server: org.bluez.GattManager1 on every adapter (src/gatt-database.c),
and the extension that installs the whole server side (advertising, agents, remote central, air).

`extension()` is what the simulator installs; its `install(sim)` runs after every (re)start of
the simulated bluetoothd and `reset()` when it stops.
"""
from __future__ import annotations

import logging
from typing import Any

from dbus_fast import Message, MessageType, Variant

from . import dbus_send_fix, errors
from .interface import Interface, method
from .server_app import (GATT_CHRC, GATT_SERVICE, AppCallError, ServerApp, ServerCharacteristic,
                         call_app, normalize_uuid, remove_match)
from .server_io import ServerIO

log = logging.getLogger("bluezsim.server")
dbus_send_fix.install()  # before any connection of the simulator writes under load

OBJECT_MANAGER = "org.freedesktop.DBus.ObjectManager"
PROPERTIES = "org.freedesktop.DBus.Properties"


def already_exists() -> Exception:
    return errors.bluez_error("AlreadyExists", "Already Exists")


class GattServer:
    """Every registered application of every adapter, plus the signal watch on them."""

    def __init__(self, sim: Any) -> None:
        self.sim = sim
        self.io = ServerIO(sim, self)
        self.apps: list[ServerApp] = []
        self._by_owner: dict[str, list[ServerApp]] = {}
        self._listeners: list[Any] = []  # callables(app, event) told about (un)registration

    def add_listener(self, fn: Any) -> None:
        self._listeners.append(fn)

    def _tell(self, app: ServerApp, event: str) -> None:
        for fn in list(self._listeners):
            try:
                fn(app, event)
            except Exception:  # one faulty listener must not break registration
                log.exception("listener failed for %s %s", event, app.path)

    # ----- registration -----------------------------------------------------------------------

    async def register(self, adapter: str, owner: str, path: str) -> None:
        if any(a.adapter == adapter and a.owner == owner and a.path == path for a in self.apps):
            raise already_exists()
        app = ServerApp(owner, path, adapter)
        self.apps.append(app)
        self._by_owner.setdefault(owner, []).append(app)
        bus = self.sim.bus
        try:
            # GDBusClient watches the app's signals before it asks for the objects.
            rule = f"type='signal',sender='{owner}'" + (f",path_namespace='{path}'" if path != "/" else "")
            await self.sim._add_match(rule)
            app.match_rule = rule
            try:
                reply = await call_app(bus, owner, path, OBJECT_MANAGER, "GetManagedObjects")
                objects = reply.body[0] if reply.signature == "a{oa{sa{sv}}}" else {}
            except AppCallError as e:
                log.info("GetManagedObjects of %s failed: %s", path, e)
                objects = {}
            if app not in self.apps:
                raise errors.failed("Failed to register application")  # the app left meanwhile
            app.parse({p: i for p, i in objects.items() if p == path or path == "/" or p.startswith(path + "/")})
            used = [(s.handle, s.end_handle) for a in self.apps if a.adapter == adapter and a.registered
                    for s in a.services]
            writes = app.add_to_database(used)
        except BaseException:
            self._forget(app)
            raise
        for obj_path, iface, handle in writes:
            # g_dbus_proxy_set_property_basic() without a reply handler; sent before our reply.
            bus.send(Message(destination=owner, path=obj_path, interface=PROPERTIES, member="Set",
                             signature="ssv", body=[iface, "Handle", Variant("q", handle)]))
        self.sim.counters["server.apps_registered"] += 1
        self._tell(app, "registered")

    def unregister(self, adapter: str, owner: str, path: str) -> None:
        app = next((a for a in self.apps if a.adapter == adapter and a.owner == owner and a.path == path), None)
        if app is None:
            raise errors.does_not_exist()
        self._forget(app)

    def _forget(self, app: ServerApp) -> None:
        if app not in self.apps:
            return
        was_registered = app.registered
        app.registered = False
        self.apps.remove(app)
        owned = self._by_owner.get(app.owner, [])
        if app in owned:
            owned.remove(app)
        if not owned:
            self._by_owner.pop(app.owner, None)
        if app.match_rule is not None:
            remove_match(self.sim.bus, app.match_rule)
            app.match_rule = None
        for link in list(self.io.links):
            for chrc in [c for c in link.ccc if c.app is app]:
                del link.ccc[chrc]
        for chrc in app.characteristics.values():
            chrc.release_sockets()
            chrc.notify_count = 0
        if was_registered:
            self.sim.counters["server.apps_unregistered"] += 1
            self._tell(app, "unregistered")

    def client_left(self, owner: str) -> None:
        for app in list(self._by_owner.get(owner, [])):
            self._forget(app)

    def reset(self) -> None:
        for app in list(self.apps):
            self._forget(app)

    # ----- lookups ----------------------------------------------------------------------------

    def find_characteristic(self, adapter: str, uuid: str) -> ServerCharacteristic | None:
        wanted = normalize_uuid(uuid)
        for app in self.apps:
            if app.adapter == adapter and app.registered:
                chrc = app.find_characteristic(wanted or "")
                if chrc is not None:
                    return chrc
        return None

    # ----- signals from the apps --------------------------------------------------------------

    def on_message(self, msg: Message) -> bool:
        if msg.message_type is not MessageType.SIGNAL:
            return False
        apps = self._by_owner.get(msg.sender or "")
        if not apps:
            return False
        if msg.member == "PropertiesChanged" and msg.interface == PROPERTIES:
            if msg.body[0] != GATT_CHRC:
                return False
            value = msg.body[1].get("Value")
            if value is None or value.signature != "ay":
                return False
            for app in apps:
                chrc = app.characteristics.get(msg.path)
                if chrc is not None and app.registered:
                    self.sim.counters["server.notify_signal_values"] += 1
                    if not self.io.notify(chrc, value.value):
                        self.sim.counters["server.notify_dropped_link_full"] += 1
            return False
        if msg.member == "InterfacesRemoved" and msg.interface == OBJECT_MANAGER:
            removed_path, names = msg.body
            if GATT_SERVICE in names:
                # proxy_removed_cb() of 5.66: the service leaves the database, the app stays registered.
                for app in apps:
                    if app.path == msg.path or app.path == "/":
                        self._remove_service(app, removed_path)
        return False

    def _remove_service(self, app: ServerApp, path: str) -> None:
        service = next((s for s in app.services if s.path == path), None)
        if service is None:
            return
        app.services.remove(service)
        for chrc in service.characteristics:
            app.characteristics.pop(chrc.path, None)
            chrc.release_sockets()
            for link in self.io.links:
                link.ccc.pop(chrc, None)
        self.sim.counters["server.services_removed"] += 1
        self._tell(app, "changed")


class GattManager1(Interface):
    name = "org.bluez.GattManager1"

    def __init__(self, server: GattServer, adapter: str) -> None:
        self.server = server
        self.adapter = adapter

    @method("oa{sv}", "")
    async def RegisterApplication(self, msg: Message, path: str, options: dict) -> None:
        await self.server.register(self.adapter, msg.sender, path)

    @method("o", "")
    def UnregisterApplication(self, msg: Message, path: str) -> None:
        self.server.unregister(self.adapter, msg.sender, path)


class ServerSide:
    """The extension: GattManager1, LEAdvertisingManager1, AgentManager1, the remote central, the air."""

    def __init__(self) -> None:
        self.sim: Any = None
        self.gatt: GattServer | None = None
        self.advertising: Any = None
        self.agents: Any = None
        self.central: Any = None
        self.air: Any = None
        self._control_exported = False

    def install(self, sim: Any) -> None:
        from .advertising import AdvertisingManager
        from .agent import AgentManager
        from .air import Air
        from .remote_central import RemoteCentral

        first = self.sim is None
        self.sim = sim
        if first:
            self.gatt = GattServer(sim)
            self.advertising = AdvertisingManager(sim)
            self.agents = AgentManager(sim)
            self.air = Air(sim, self.gatt, self.advertising)
            self.central = RemoteCentral(sim, self.gatt, self.advertising)
            sim.add_client_watch(self._client_left)
            sim.server_side = self  # A's Device1.Pair reaches agent.pair() through this
        for name, adapter in sim.adapters.items():
            sim.export(adapter.path, GattManager1(self.gatt, name))
            self.advertising.install_adapter(adapter)
        self.agents.install()
        sim.bus.add_message_handler(self.gatt.on_message)
        sim.bus.add_message_handler(self.advertising.on_message)
        if not self._control_exported:
            self.central.install_control()
            self._control_exported = True
        self.air.install()

    def reset(self) -> None:
        if self.gatt is None:
            return
        self.central.reset()
        self.air.reset()
        self.gatt.reset()
        self.advertising.reset()
        self.agents.reset()

    def _client_left(self, owner: str) -> None:
        self.gatt.client_left(owner)
        self.advertising.client_left(owner)
        self.agents.client_left(owner)


def extension() -> object:
    return ServerSide()
