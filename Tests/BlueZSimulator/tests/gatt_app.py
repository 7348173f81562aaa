"""A BlueZ peripheral application written with dbus-fast, as a real GATT server app is.

It exports an ObjectManager at its root and GattService1 / GattCharacteristic1 / GattDescriptor1
objects below it, answers ReadValue/WriteValue/StartNotify/StopNotify/AcquireNotify/AcquireWrite/
Confirm, and records every call (with its options) so tests can check what bluetoothd sent.
Objects are served by a plain message handler so each object can have exactly the optional
properties a test wants (NotifyAcquired, Handle, ...).
"""
from __future__ import annotations

import socket
from typing import Any

from dbus_fast import DBusError, Message, MessageType, Variant

SERVICE = "org.bluez.GattService1"
CHRC = "org.bluez.GattCharacteristic1"
DESC = "org.bluez.GattDescriptor1"
PROPS = "org.freedesktop.DBus.Properties"
OM = "org.freedesktop.DBus.ObjectManager"
ADV = "org.bluez.LEAdvertisement1"


class Char:
    def __init__(self, app: "GattApp", path: str, uuid: str, flags: list[str], service: str,
                 value: bytes = b"", handle: int | None = 0, notify_acquired: bool = False,
                 write_acquired: bool = False) -> None:
        self.app = app
        self.path = path
        self.uuid = uuid
        self.flags = flags
        self.service = service
        self.value = bytearray(value)
        self.handle = handle
        self.notify_acquired = notify_acquired
        self.write_acquired = write_acquired
        self.notifying = False
        self.read_error: tuple[str, str] | None = None
        self.write_error: tuple[str, str] | None = None
        self.writes: list[tuple[bytes, dict]] = []
        self.reads: list[dict] = []
        self.confirms = 0
        self.start_notify_calls = 0
        self.stop_notify_calls = 0
        self.acquire_notify_calls: list[dict] = []
        self.acquire_notify_error: tuple[str, str] | None = None
        self.notify_sock: socket.socket | None = None
        self.notify_socks: list[socket.socket] = []  # every socket handed out, oldest first
        self.write_sock: socket.socket | None = None
        self.eagain = 0

    def props(self) -> dict[str, Variant]:
        p = {"UUID": Variant("s", self.uuid), "Service": Variant("o", self.service),
             "Flags": Variant("as", self.flags), "Value": Variant("ay", bytes(self.value))}
        if self.handle is not None:
            p["Handle"] = Variant("q", self.handle)
        if self.notify_acquired:
            p["NotifyAcquired"] = Variant("b", self.notify_sock is not None)
        if self.write_acquired:
            p["WriteAcquired"] = Variant("b", self.write_sock is not None)
        if "notify" in self.flags or "indicate" in self.flags:
            p["Notifying"] = Variant("b", self.notifying)
        return p

    def notify(self, value: bytes) -> None:
        """What a peripheral app does to notify: set Value and emit PropertiesChanged."""
        self.value = bytearray(value)
        self.app.bus.send(Message.new_signal(self.path, PROPS, "PropertiesChanged", "sa{sv}as",
                                             [CHRC, {"Value": Variant("ay", bytes(value))}, []]))

    def send_fd(self, value: bytes) -> bool:
        """Notifies through the AcquireNotify socket; False (counted) when it would block."""
        try:
            self.notify_sock.send(value)
            return True
        except BlockingIOError:
            self.eagain += 1
            return False


class Desc:
    def __init__(self, path: str, uuid: str, flags: list[str], chrc: str, value: bytes = b"") -> None:
        self.path = path
        self.uuid = uuid
        self.flags = flags
        self.chrc = chrc
        self.value = bytearray(value)
        self.writes: list[tuple[bytes, dict]] = []

    def props(self) -> dict[str, Variant]:
        return {"UUID": Variant("s", self.uuid), "Characteristic": Variant("o", self.chrc),
                "Flags": Variant("as", self.flags), "Value": Variant("ay", bytes(self.value))}


class GattApp:
    def __init__(self, bus: Any, root: str = "/app") -> None:
        self.bus = bus
        self.root = root
        self.services: dict[str, dict[str, Variant]] = {}
        self.chars: dict[str, Char] = {}
        self.descs: dict[str, Desc] = {}
        self.adverts: dict[str, dict[str, Variant]] = {}
        self.released: list[str] = []
        self.handle_writes: list[tuple[str, int]] = []
        self.managed_objects_error: str | None = None
        bus.add_message_handler(self._handle)

    # ----- building ----------------------------------------------------------------------------

    def service(self, name: str, uuid: str, primary: bool = True, handle: int | None = 0) -> str:
        path = f"{self.root}/{name}"
        props = {"UUID": Variant("s", uuid), "Primary": Variant("b", primary)}
        if handle is not None:
            props["Handle"] = Variant("q", handle)
        self.services[path] = props
        return path

    def char(self, service: str, name: str, uuid: str, flags: list[str], **kw: Any) -> Char:
        c = Char(self, f"{service}/{name}", uuid, flags, service, **kw)
        self.chars[c.path] = c
        return c

    def desc(self, chrc: Char, name: str, uuid: str, flags: list[str], value: bytes = b"") -> Desc:
        d = Desc(f"{chrc.path}/{name}", uuid, flags, chrc.path, value)
        self.descs[d.path] = d
        return d

    def advert(self, path: str, props: dict[str, Variant]) -> None:
        self.adverts[path] = props

    def set_advert_props(self, path: str, changed: dict[str, Variant]) -> None:
        self.adverts[path].update(changed)
        self.bus.send(Message.new_signal(path, PROPS, "PropertiesChanged", "sa{sv}as", [ADV, changed, []]))

    def managed_objects(self) -> dict:
        out: dict[str, dict[str, dict[str, Variant]]] = {}
        for path, props in self.services.items():
            out[path] = {SERVICE: props}
        for path, c in self.chars.items():
            out[path] = {CHRC: c.props()}
        for path, d in self.descs.items():
            out[path] = {DESC: d.props()}
        return out

    def remove_service(self, path: str) -> None:
        del self.services[path]
        self.bus.send(Message.new_signal(self.root, OM, "InterfacesRemoved", "oas", [path, [SERVICE]]))

    def _send_keeping(self, reply: Message, sock: socket.socket) -> None:
        """Sends a reply carrying `sock`'s fd and closes our copy only once it is written."""
        self.bus.send(reply).add_done_callback(lambda _f: sock.close())

    # ----- serving -----------------------------------------------------------------------------

    def _handle(self, msg: Message) -> Any:
        if msg.message_type is not MessageType.METHOD_CALL:
            return False
        if not (msg.path == self.root or msg.path.startswith(self.root + "/") or msg.path in self.adverts):
            return False  # another app sharing this connection
        try:
            return self._dispatch(msg)
        except DBusError as e:
            return e._as_message(msg)

    def _dispatch(self, msg: Message) -> Any:
        path, iface, member = msg.path, msg.interface, msg.member
        if member == "GetManagedObjects" and path == self.root:
            if self.managed_objects_error:
                raise DBusError("org.freedesktop.DBus.Error.UnknownMethod", self.managed_objects_error)
            return Message.new_method_return(msg, "a{oa{sa{sv}}}", [self.managed_objects()])
        if path in self.adverts:
            if iface == PROPS and member == "GetAll":
                return Message.new_method_return(msg, "a{sv}", [self.adverts[path]])
            if member == "Release":
                self.released.append(path)
                return Message.new_method_return(msg)
        if iface == PROPS and member == "Set":
            _iface, name, value = msg.body
            if name == "Handle":
                self.handle_writes.append((path, value.value))
                return Message.new_method_return(msg)
        c = self.chars.get(path)
        if c is not None:
            return self._char_call(c, msg)
        d = self.descs.get(path)
        if d is not None and member == "ReadValue":
            return Message.new_method_return(msg, "ay", [bytes(d.value)])
        if d is not None and member == "WriteValue":
            d.writes.append((bytes(msg.body[0]), _plain(msg.body[1])))
            return Message.new_method_return(msg)
        raise DBusError("org.freedesktop.DBus.Error.UnknownMethod", f"{iface}.{member} at {path}")

    def _char_call(self, c: Char, msg: Message) -> Any:
        member = msg.member
        if member == "ReadValue":
            opts = _plain(msg.body[0])
            c.reads.append(opts)
            if c.read_error:
                raise DBusError(*c.read_error)
            offset = opts.get("offset", 0)
            if offset > len(c.value):
                raise DBusError("org.bluez.Error.InvalidOffset", "Invalid offset")
            return Message.new_method_return(msg, "ay", [bytes(c.value[offset:])])
        if member == "WriteValue":
            value, opts = bytes(msg.body[0]), _plain(msg.body[1])
            c.writes.append((value, opts))
            if c.write_error:
                raise DBusError(*c.write_error)
            offset = opts.get("offset", 0)
            c.value[offset:offset + len(value)] = value
            return Message.new_method_return(msg)
        if member == "StartNotify":
            c.start_notify_calls += 1
            c.notifying = True
            return Message.new_method_return(msg)
        if member == "StopNotify":
            c.stop_notify_calls += 1
            c.notifying = False
            return Message.new_method_return(msg)
        if member == "Confirm":
            c.confirms += 1
            return Message.new_method_return(msg)
        if member == "AcquireNotify":
            c.acquire_notify_calls.append(_plain(msg.body[0]))
            if c.acquire_notify_error:
                raise DBusError(*c.acquire_notify_error)
            mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET | socket.SOCK_NONBLOCK)
            c.notify_sock = mine
            c.notify_socks.append(mine)
            reply = Message.new_method_return(msg, "hq", [0, _plain(msg.body[0]).get("mtu", 23)],
                                              unix_fds=[theirs.fileno()])
            self._send_keeping(reply, theirs)
            return True
        if member == "AcquireWrite":
            mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET | socket.SOCK_NONBLOCK)
            c.write_sock = mine
            self._send_keeping(Message.new_method_return(msg, "hq", [0, _plain(msg.body[0]).get("mtu", 23)],
                                                         unix_fds=[theirs.fileno()]), theirs)
            return True
        raise DBusError("org.freedesktop.DBus.Error.UnknownMethod", member)


def _plain(options: dict[str, Variant]) -> dict:
    return {k: v.value for k, v in options.items()}
