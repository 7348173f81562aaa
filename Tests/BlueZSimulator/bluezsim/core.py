"""The Simulator: bus plumbing shared by every part of the simulated bluetoothd.

Objects are served by one message handler on the bluetoothd connection instead of dbus-fast's
ServiceInterface machinery, because BlueZ's semantics need things ServiceInterface cannot express
cheaply: optional properties that are *absent* (not zero), exact container types chosen per value,
and a hot notification path that must not pay for reflection.
"""
from __future__ import annotations

import asyncio
import collections
import inspect
import logging
from typing import Any, Callable, Iterable

from dbus_fast import DBusError, Message, MessageType, Variant
from dbus_fast.aio import MessageBus

from . import errors
from .adapter import DEFAULT_ADAPTERS, adapter_address, parse_adapter_names
from .interface import Interface, Reply
from .object_calls import introspect, properties_call

log = logging.getLogger("bluezsim")

BLUEZ_NAME = "org.bluez"
CONTROL_NAME = "org.gattway.Simulator1"
OBJECT_MANAGER = "org.freedesktop.DBus.ObjectManager"
PROPERTIES = "org.freedesktop.DBus.Properties"
INTROSPECTABLE = "org.freedesktop.DBus.Introspectable"

__all__ = ["Simulator", "Interface", "Reply"]

class Simulator:
    """One simulated bluetoothd plus the radio world around it.

    `bus` is the connection owning org.bluez; it is replaced on every simulated bluetoothd restart.
    `control_bus` owns org.gattway.Simulator1 and lives for the whole run.
    """

    def __init__(self, address: str, bluez_version: str = "5.66", adapters: list[str] | None = None) -> None:
        self.address = address
        # The controllers this bluetoothd serves ("hciN", N the controller index); each hears its own air.
        self.adapter_names = parse_adapter_names(adapters if adapters is not None else DEFAULT_ADAPTERS)
        self.bluez_version = bluez_version
        self.version_tuple = tuple(int(p) for p in bluez_version.split("."))
        self.bus: MessageBus | None = None
        self.control_bus: MessageBus | None = None
        self.counters: collections.Counter[str] = collections.Counter()
        self.objects: dict[str, dict[str, Interface]] = {}
        self.adapters: dict[str, Any] = {}
        self.peripherals: dict[str, Any] = {}  # "hciN/AA:BB:.." -> VirtualPeripheral
        self._client_watches: list[Callable[[str], None]] = []
        self._extensions: list[Any] = []
        self._control_objects: dict[str, dict[str, Interface]] = {}
        self.running = False
        self.gatt_cache = "always"  # main.conf [GATT] Cache
        self.tasks: set[asyncio.Task] = set()
        self.peripherals_generation = 0  # bumped on add/remove so scanners refresh their schedule
        # Fault injection, keyed by "Member" or "org.bluez.Iface.Member".
        self.injected_errors: dict[str, list[list]] = {}  # key -> [[error_name, message, remaining]]
        self.reply_delays: dict[str, float] = {}

    # ----- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        self.control_bus = await MessageBus(bus_address=self.address, negotiate_unix_fd=True).connect()
        self.control_bus.add_message_handler(self._control_handler)
        await self._start_bluetoothd()
        reply = await self.control_bus.request_name(CONTROL_NAME)
        log.debug("control name: %s", reply)

    async def stop(self) -> None:
        await self._stop_bluetoothd()
        if self.control_bus is not None:
            self.control_bus.disconnect()
            self.control_bus = None

    async def _start_bluetoothd(self) -> None:
        from .adapter import Adapter

        bus = await MessageBus(bus_address=self.address, negotiate_unix_fd=True).connect()
        self.bus = bus
        bus.add_message_handler(self._bluez_handler)
        await self._add_match("type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged'")
        self.objects = {}
        self.adapters = {}
        self.running = True
        self.export("/", _RootObjectManager())
        for name in self.adapter_names:
            index = int(name[3:])
            adapter = Adapter(self, index, adapter_address(index))
            self.adapters[adapter.name] = adapter
            adapter.export_all()
        for ext in self._extensions:
            ext.install(self)
        for peripheral in self.peripherals.values():
            peripheral.attach()
        reply = await bus.request_name(BLUEZ_NAME)
        log.debug("org.bluez: %s", reply)

    async def _stop_bluetoothd(self) -> None:
        if self.bus is None:
            return
        self.running = False
        for ext in self._extensions:
            ext.reset()
        for peripheral in self.peripherals.values():
            peripheral.detach()
        for adapter in self.adapters.values():
            adapter.shutdown()
        self.objects = {}
        bus, self.bus = self.bus, None
        bus.disconnect()

    async def restart_bluetoothd(self, down_seconds: float) -> None:
        """Drops org.bluez (clients see the name vanish), waits, then serves a fresh tree."""
        self.counters["bluetoothd_restarts"] += 1
        await self._stop_bluetoothd()
        await asyncio.sleep(max(0.0, down_seconds))
        await self._start_bluetoothd()

    def spawn(self, coro) -> asyncio.Task:
        """Runs a background task that is kept referenced and whose failure is logged."""
        task = asyncio.get_running_loop().create_task(coro)
        self.tasks.add(task)

        def done(t: asyncio.Task) -> None:
            self.tasks.discard(t)
            if not t.cancelled() and t.exception() is not None:
                log.error("background task failed", exc_info=t.exception())

        task.add_done_callback(done)
        return task

    async def _add_match(self, rule: str) -> None:
        assert self.bus is not None
        await self.bus.call(Message(destination="org.freedesktop.DBus", path="/org/freedesktop/DBus",
                                    interface="org.freedesktop.DBus", member="AddMatch",
                                    signature="s", body=[rule]))

    # ----- virtual peripherals -----------------------------------------------------------------

    def add_peripheral(self, spec: dict, adapter: str = "hci0") -> Any:
        """Puts a virtual peripheral on the air of `adapter`, or of every adapter its spec's `adapters` (or per-adapter
        `rssi`) names (spec: one scenario peripheral; an optional `behaviours` mapping of characteristic UUID ->
        behaviour object overrides scenario behaviours)."""
        from .peripheral import VirtualPeripheral

        spec = dict(spec)
        behaviours = spec.pop("behaviours", None)
        p = VirtualPeripheral(self, spec, adapter, behaviours)
        for name in p.adapters:
            if name not in self.adapter_names:
                raise ValueError(f"unknown adapter {name!r} (have {', '.join(self.adapter_names)})")
            if self.find_peripheral(p.address, name) is not None:
                raise ValueError(f"a peripheral {p.address} already exists on {name}")
        self.peripherals[f"{p.adapter_name}/{p.address}"] = p
        self.peripherals_generation += 1
        self.counters["peripherals_added"] += 1
        return p

    def find_peripheral(self, address: str, adapter: str | None = None) -> Any:
        """The peripheral with `address` that `adapter` hears (any adapter when None)."""
        address = address.upper()
        for p in self.peripherals.values():
            if p.address == address and (adapter is None or adapter in p.signals):
                return p
        return None

    async def remove_peripheral(self, p: Any) -> None:
        """Takes a peripheral off the air: its link drops (remote), bluetoothd keeps its Device objects."""
        p.present = False
        self.peripherals.pop(f"{p.adapter_name}/{p.address}", None)
        self.peripherals_generation += 1
        for dev in self.devices_for(p):
            await dev.drop_link("org.bluez.Reason.Remote", "Connection terminated by remote user")

    def peripherals_on(self, adapter: str) -> list[Any]:
        """What is on `adapter`'s air (whether in range now or not, see VirtualPeripheral.heard_on)."""
        return [p for p in self.peripherals.values() if p.present and adapter in p.signals]

    def device_for(self, p: Any, adapter: str | None = None) -> Any:
        """bluetoothd's Device object for `p` on `adapter` (default: the first adapter that hears it)."""
        found = self.adapters.get(adapter or p.adapter_name)
        return found.devices.get(p.address) if found else None

    def devices_for(self, p: Any) -> list[Any]:
        """The Device objects of every adapter that knows `p` (one per adapter it was discovered on)."""
        return [d for a in self.adapters.values() if (d := a.devices.get(p.address)) is not None and d.peripheral is p]

    # ----- extensions and client tracking ------------------------------------------------------

    def add_extension(self, ext: Any) -> None:
        self._extensions.append(ext)
        if self.running:
            ext.install(self)

    def add_client_watch(self, callback: Callable[[str], None]) -> None:
        """`callback(unique_name)` runs when that client leaves the bus."""
        self._client_watches.append(callback)

    def remove_client_watch(self, callback: Callable[[str], None]) -> None:
        if callback in self._client_watches:
            self._client_watches.remove(callback)

    # ----- object tree -----------------------------------------------------------------------

    def export(self, path: str, interface: Interface) -> None:
        """Adds an interface to the org.bluez tree and announces it with InterfacesAdded."""
        ifaces = self.objects.setdefault(path, {})
        if interface.name in ifaces:
            raise ValueError(f"{interface.name} already exported at {path}")
        ifaces[interface.name] = interface
        interface.path = path
        interface.sim = self
        if path == "/" and interface.name == OBJECT_MANAGER:
            return
        self._signal("/", OBJECT_MANAGER, "InterfacesAdded", "oa{sa{sv}}",
                     [path, {interface.name: interface.get_properties()}])

    def export_many(self, path: str, interfaces: Iterable[Interface]) -> None:
        """Exports several interfaces of one object with a single InterfacesAdded, as bluetoothd does."""
        ifaces = self.objects.setdefault(path, {})
        announced = {}
        for interface in interfaces:
            ifaces[interface.name] = interface
            interface.path = path
            interface.sim = self
            announced[interface.name] = interface.get_properties()
        self._signal("/", OBJECT_MANAGER, "InterfacesAdded", "oa{sa{sv}}", [path, announced])

    def unexport(self, path: str, interface_name: str | None = None) -> None:
        """Removes one interface (or all of them) and announces it with InterfacesRemoved."""
        ifaces = self.objects.get(path)
        if ifaces is None:
            return
        if interface_name is None:
            names = list(ifaces)
            del self.objects[path]
        else:
            if interface_name not in ifaces:
                return
            names = [interface_name]
            del ifaces[interface_name]
            if not ifaces:
                del self.objects[path]
        self._signal("/", OBJECT_MANAGER, "InterfacesRemoved", "oas", [path, names])

    def interface(self, path: str, name: str) -> Interface | None:
        return self.objects.get(path, {}).get(name)

    def emit_properties_changed(self, path: str, interface_name: str,
                                changed: dict[str, Variant], invalidated: list[str] | None = None) -> None:
        self._signal(path, PROPERTIES, "PropertiesChanged", "sa{sv}as",
                     [interface_name, changed, invalidated or []])

    def emit_signal(self, path: str, interface_name: str, member: str, signature: str, body: list) -> None:
        self._signal(path, interface_name, member, signature, body)

    def _signal(self, path: str, interface_name: str, member: str, signature: str, body: list) -> None:
        if self.bus is None:
            return
        self.bus.send(Message.new_signal(path, interface_name, member, signature, body))

    # ----- control objects (org.gattway.Simulator1 connection) --------------------------------

    def export_control(self, path: str, interface: Interface) -> None:
        self._control_objects.setdefault(path, {})[interface.name] = interface
        interface.path = path
        interface.sim = self

    # ----- dispatch --------------------------------------------------------------------------

    def _bluez_handler(self, msg: Message) -> Any:
        if msg.message_type is MessageType.SIGNAL:
            if msg.member == "NameOwnerChanged" and msg.sender == "org.freedesktop.DBus":
                name, _old, new = msg.body
                if name.startswith(":") and not new:
                    for cb in list(self._client_watches):
                        try:
                            cb(name)
                        except Exception:  # one faulty watcher must not break the others
                            log.exception("client watch failed for %s", name)
            return False
        if msg.message_type is not MessageType.METHOD_CALL:
            return False
        return self._dispatch(self.bus, self.objects, msg)

    def _control_handler(self, msg: Message) -> Any:
        if msg.message_type is not MessageType.METHOD_CALL:
            return False
        return self._dispatch(self.control_bus, self._control_objects, msg)

    def _dispatch(self, bus: MessageBus | None, objects: dict[str, dict[str, Interface]], msg: Message) -> Any:
        iface_name = msg.interface
        path = msg.path
        if iface_name == PROPERTIES:
            return self._properties(objects, msg)
        if iface_name == INTROSPECTABLE:
            return Message.new_method_return(msg, "s", [self._introspect(objects, path)])
        if iface_name == OBJECT_MANAGER and msg.member == "GetManagedObjects" and path == "/" \
                and objects is self.objects:
            return Message.new_method_return(msg, "a{oa{sa{sv}}}", [self.managed_objects()])
        if iface_name == "org.freedesktop.DBus.Peer":
            return False
        ifaces = objects.get(path)
        if ifaces is None:
            raise DBusError("org.freedesktop.DBus.Error.UnknownObject", f"No such object {path}")
        if iface_name is None:
            candidates = [i for i in ifaces.values() if msg.member in i.methods()]
            iface = candidates[0] if candidates else None
        else:
            iface = ifaces.get(iface_name)
        if iface is None:
            raise DBusError("org.freedesktop.DBus.Error.UnknownInterface", f"No interface {iface_name} at {path}")
        spec = iface.methods().get(msg.member)
        if spec is None:
            raise DBusError("org.freedesktop.DBus.Error.UnknownMethod",
                            f"Method {msg.member} not found in {iface.name}")
        in_sig, _out_sig, fn = spec
        if msg.signature != in_sig:
            raise errors.invalid_args()
        self.counters[f"calls.{iface.name.rsplit('.', 1)[-1]}.{msg.member}"] += 1
        if objects is self.objects and (self.injected_errors or self.reply_delays):
            full = f"{iface.name}.{msg.member}"
            self._inject_error(full, msg.member)
            delay = self.reply_delays.get(full, self.reply_delays.get(msg.member, 0.0))
            if delay > 0:
                self.spawn(self._finish(bus, msg, spec, self._delayed(delay, fn, iface, msg)))
                return True
        result = fn(iface, msg, *msg.body)
        if inspect.iscoroutine(result):
            self.spawn(self._finish(bus, msg, spec, result))
            return True
        return self._reply(msg, spec, result)

    def _inject_error(self, full: str, member: str) -> None:
        for key in (full, member):
            queue = self.injected_errors.get(key)
            if queue:
                entry = queue[0]
                if entry[2] > 0:
                    entry[2] -= 1
                    if entry[2] == 0:
                        queue.pop(0)
                self.counters["injected_errors"] += 1
                raise DBusError(entry[0], entry[1])

    @staticmethod
    async def _delayed(delay: float, fn, iface, msg):
        """A slow bluetoothd reply; other calls keep being served meanwhile."""
        await asyncio.sleep(delay)
        result = fn(iface, msg, *msg.body)
        if inspect.iscoroutine(result):
            result = await result
        return result

    async def _finish(self, bus: MessageBus | None, msg: Message, spec, coro) -> None:
        result = None
        try:
            result = await coro
            reply = self._reply(msg, spec, result)
        except DBusError as e:
            reply = e._as_message(msg)
        except Exception as e:  # reported to the caller rather than leaving it waiting for a timeout
            log.exception("method %s failed", msg.member)
            reply = Message.new_error(msg, errors.PREFIX + "Failed", f"simulator error: {e}")
        on_sent = result.on_sent if isinstance(result, Reply) else None
        if bus is not None and bus.connected and (msg.flags.value & 1) == 0:
            sent = bus.send(reply)
            if on_sent is not None:
                sent.add_done_callback(lambda _f: on_sent())
        elif on_sent is not None:
            on_sent()

    @staticmethod
    def _reply(msg: Message, spec, result) -> Message:
        if isinstance(result, Reply):
            return Message(message_type=MessageType.METHOD_RETURN, reply_serial=msg.serial,
                           destination=msg.sender, signature=result.signature, body=result.body,
                           unix_fds=result.unix_fds)
        out_sig = spec[1]
        body = [] if result is None else (list(result) if isinstance(result, tuple) else [result])
        return Message.new_method_return(msg, out_sig, body)

    def managed_objects(self) -> dict:
        out = {}
        for path, ifaces in self.objects.items():
            props = {name: i.get_properties() for name, i in ifaces.items() if name != OBJECT_MANAGER}
            if props:
                out[path] = props
        return out

    def _properties(self, objects, msg: Message) -> Any:
        result = properties_call(objects, msg)
        if inspect.iscoroutine(result):  # an asynchronous property write, e.g. Adapter1.Powered
            self.spawn(self._finish(self.bus, msg, ("ssv", "", None), result))
            return True
        return result

    def _introspect(self, objects, path: str) -> str:
        return introspect(objects, path)


class _RootObjectManager(Interface):
    name = OBJECT_MANAGER

    def introspect_xml(self) -> str:
        return ('<interface name="org.freedesktop.DBus.ObjectManager"><method name="GetManagedObjects">'
                '<arg type="a{oa{sa{sv}}}" direction="out"/></method><signal name="InterfacesAdded">'
                '<arg type="o"/><arg type="a{sa{sv}}"/></signal><signal name="InterfacesRemoved">'
                '<arg type="o"/><arg type="as"/></signal></interface>')
