"""A GATT application registered through GattManager1: its parsed objects and the calls into it.

Parsing follows src/gatt-database.c of BlueZ 5.66 step by step: every object the app's
GetManagedObjects returns is a proxy; services are created first, then characteristics (their
`Flags` parsed, any unknown flag failing the whole app), then descriptors; only after that are the
services put into the attribute database, where UUIDs, `Primary` and `Handle` are read and
allocated handles are written back to the app with Properties.Set.
"""
from __future__ import annotations

import asyncio
import logging
from typing import Any

from dbus_fast import Message, MessageFlag, MessageType, Variant

from .errors import failed

log = logging.getLogger("bluezsim.server")

GATT_SERVICE = "org.bluez.GattService1"
GATT_CHRC = "org.bluez.GattCharacteristic1"
GATT_DESC = "org.bluez.GattDescriptor1"
GATT_PROFILE = "org.bluez.GattProfile1"
PROPERTIES = "org.freedesktop.DBus.Properties"

# bluetoothd's own D-Bus calls use libdbus' default timeout.
APP_CALL_TIMEOUT = 25.0
NO_REPLY = "org.freedesktop.DBus.Error.NoReply"

# Characteristic property bits (Core spec Vol 3 Part G 3.3.1.1).
PROP_BROADCAST = 0x01
PROP_READ = 0x02
PROP_WRITE_WITHOUT_RESP = 0x04
PROP_WRITE = 0x08
PROP_NOTIFY = 0x10
PROP_INDICATE = 0x20
PROP_AUTH = 0x40
PROP_EXT = 0x80

# flag -> (property bits, extended property bits); parse_chrc_flags() in gatt-database.c.
CHRC_FLAGS: dict[str, tuple[int, int]] = {
    "broadcast": (PROP_BROADCAST, 0),
    "read": (PROP_READ, 0),
    "write-without-response": (PROP_WRITE_WITHOUT_RESP, 0),
    "write": (PROP_WRITE, 0),
    "notify": (PROP_NOTIFY, 0),
    "indicate": (PROP_INDICATE, 0),
    "authenticated-signed-writes": (PROP_AUTH, 0),
    "extended-properties": (PROP_EXT, 0),
    "reliable-write": (0, 0x01),
    "writable-auxiliaries": (0, 0x02),
    "encrypt-read": (PROP_READ, 0),
    "encrypt-write": (PROP_WRITE, 0),
    "encrypt-authenticated-read": (PROP_READ, 0),
    "encrypt-authenticated-write": (PROP_WRITE, 0),
    "secure-read": (PROP_READ, 0),
    "secure-write": (PROP_WRITE, 0),
    "authorize": (0, 0),
    "encrypt-notify": (PROP_NOTIFY, 0),
    "encrypt-authenticated-notify": (PROP_NOTIFY, 0),
    "secure-notify": (PROP_NOTIFY, 0),
    "encrypt-indicate": (PROP_INDICATE, 0),
    "encrypt-authenticated-indicate": (PROP_INDICATE, 0),
    "secure-indicate": (PROP_INDICATE, 0),
}
DESC_FLAGS = {"read", "write", "encrypt-read", "encrypt-write", "encrypt-authenticated-read",
              "encrypt-authenticated-write", "secure-read", "secure-write", "authorize"}

BASE_UUID_TAIL = "-0000-1000-8000-00805f9b34fb"
GAP_UUID = "00001800" + BASE_UUID_TAIL
GATT_UUID = "00001801" + BASE_UUID_TAIL
CCC_UUID = "00002902" + BASE_UUID_TAIL
# register_core_services() fills the local database first: GAP 0x0001-0x0007 (populate_gap_service(),
# 7 handles), GATT 0x0008-0x0011 (populate_gatt_service(), 10 handles) and, with main.conf's default
# DeviceID source, Device Information 0x0012-0x0014 (populate_devinfo_service(), 3 handles).
FIRST_APP_HANDLE = 0x0015


def normalize_uuid(text: str) -> str | None:
    """bt_string_to_uuid(): a 16/32-bit hex number or a 128-bit string; None when invalid."""
    if not isinstance(text, str):
        return None
    t = text.strip().lower()
    if len(t) == 36 and t.count("-") == 4:
        try:
            int(t.replace("-", ""), 16)
        except ValueError:
            return None
        return t
    if t.startswith("0x"):
        t = t[2:]
    if 1 <= len(t) <= 8:
        try:
            return f"{int(t, 16):08x}" + BASE_UUID_TAIL
        except ValueError:
            return None
    return None


class AppCallError(Exception):
    """The app answered a call with a D-Bus error (or did not answer)."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(f"{name}: {message}")
        self.name = name
        self.message = message


async def call_app(bus: Any, owner: str, path: str, interface: str, member: str,
                   signature: str = "", body: list | None = None) -> Message:
    """Calls a method of the app as bluetoothd would, raising AppCallError on an error reply."""
    msg = Message(destination=owner, path=path, interface=interface, member=member,
                  signature=signature, body=body or [])
    try:
        reply = await asyncio.wait_for(bus.call(msg), APP_CALL_TIMEOUT)
    except asyncio.TimeoutError:
        raise AppCallError(NO_REPLY, f"{member} on {path} got no reply within {APP_CALL_TIMEOUT:.0f} s") from None
    except (EOFError, ConnectionError) as e:
        raise AppCallError(NO_REPLY, f"{member} on {path}: bus connection lost ({e})") from None
    if reply.message_type is MessageType.ERROR:
        text = reply.body[0] if reply.body and isinstance(reply.body[0], str) else ""
        raise AppCallError(reply.error_name or "", text)
    return reply


def send_app_noreply(bus: Any, owner: str, path: str, interface: str, member: str) -> None:
    """A call bluetoothd makes without waiting for the answer (Confirm, Release, StopNotify)."""
    bus.send(Message(destination=owner, path=path, interface=interface, member=member,
                     flags=MessageFlag.NO_REPLY_EXPECTED))


def remove_match(bus: Any, rule: str) -> None:
    """Drops a signal match added for an app (dbus-daemon counts each AddMatch separately)."""
    if bus is not None and bus.connected:
        bus.send(Message(destination="org.freedesktop.DBus", path="/org/freedesktop/DBus",
                         interface="org.freedesktop.DBus", member="RemoveMatch", signature="s", body=[rule]))


class ServerDescriptor:
    def __init__(self, path: str, props: dict[str, Variant], characteristic: "ServerCharacteristic") -> None:
        self.path = path
        self.props = props
        self.characteristic = characteristic
        self.uuid = ""
        self.flags: list[str] = list(props["Flags"].value)
        self.handle = 0


class ServerCharacteristic:
    def __init__(self, path: str, props: dict[str, Variant], service: "ServerService",
                 flags: list[str], properties: int, ext_properties: int) -> None:
        self.path = path
        self.props = props
        self.service = service
        self.flags = flags
        self.properties = properties
        self.ext_properties = ext_properties
        self.uuid = ""
        self.handle = 0
        self.ccc_handle = 0
        self.descriptors: list[ServerDescriptor] = []
        # "NotifyAcquired"/"WriteAcquired" present on the object: bluetoothd then uses the Acquire calls.
        self.exposes_notify_acquired = "NotifyAcquired" in props
        self.exposes_write_acquired = "WriteAcquired" in props
        self.authorize = "authorize" in flags
        # Per-characteristic notification state shared by all connected centrals (ntfy_cnt, notify_io).
        self.notify_count = 0
        self.notify_readers: dict[Any, Any] = {}  # AcquireNotify sockets: per link (5.69+) or {None: one}
        self.write_sockets: dict[Any, Any] = {}  # bluetoothd's ends of AcquireWrite sockets, keyed like readers

    @property
    def app(self) -> "ServerApp":
        return self.service.app

    def has(self, prop: int) -> bool:
        return bool(self.properties & prop)

    def release_sockets(self) -> None:
        """The app is gone: close bluetoothd's ends of its Acquire* sockets."""
        for reader in self.notify_readers.values():
            reader.close()
        self.notify_readers.clear()
        for sock in self.write_sockets.values():
            sock.close()
        self.write_sockets.clear()


class ServerService:
    def __init__(self, path: str, props: dict[str, Variant], app: "ServerApp") -> None:
        self.path = path
        self.props = props
        self.app = app
        self.uuid = ""
        self.primary = True
        self.handle = 0
        self.end_handle = 0
        self.includes: list[str] = []
        self.characteristics: list[ServerCharacteristic] = []
        self.descriptors: list[ServerDescriptor] = []
        self.attr_count = 1


class ServerApp:
    """One registered application (owner + root path) on one adapter."""

    def __init__(self, owner: str, path: str, adapter: str) -> None:
        self.owner = owner
        self.path = path
        self.adapter = adapter
        self.services: list[ServerService] = []
        self.characteristics: dict[str, ServerCharacteristic] = {}
        self.registered = False
        self.match_rule: str | None = None  # the signal match bluetoothd's client added for this app

    def describe(self) -> dict:
        """A JSON-friendly view for the control interface."""
        return {
            "owner": self.owner, "path": self.path, "adapter": self.adapter,
            "services": [{
                "path": s.path, "uuid": s.uuid, "primary": s.primary, "handle": s.handle,
                "end_handle": s.end_handle, "includes": s.includes,
                "characteristics": [{
                    "path": c.path, "uuid": c.uuid, "flags": c.flags, "handle": c.handle,
                    "ccc_handle": c.ccc_handle, "notify_acquired": c.exposes_notify_acquired,
                    "write_acquired": c.exposes_write_acquired, "notifying": c.notify_count > 0,
                    "descriptors": [{"path": d.path, "uuid": d.uuid, "flags": d.flags, "handle": d.handle}
                                    for d in c.descriptors],
                } for c in s.characteristics],
            } for s in self.services],
        }

    # ----- parsing (client_ready_cb) ---------------------------------------------------------

    def parse(self, objects: dict[str, dict[str, dict[str, Variant]]]) -> None:
        """Builds services/characteristics/descriptors; raises the DBusError bluetoothd replies with."""
        proxies = [(path, iface, props) for path, ifaces in objects.items() for iface, props in ifaces.items()
                   if iface not in (PROPERTIES, "org.freedesktop.DBus.Introspectable",
                                    "org.freedesktop.DBus.ObjectManager", "org.freedesktop.DBus.Peer")]
        if not proxies:
            raise failed("No object received")
        ok = True
        for path, iface, props in proxies:
            if iface == GATT_SERVICE:
                if not path.startswith("/") or any(s.path == path for s in self.services):
                    ok = False
                    break
                self.services.append(ServerService(path, props, self))
        if ok:
            for path, iface, props in proxies:
                if iface == GATT_CHRC and not self._create_characteristic(path, props):
                    ok = False
                    break
        if ok:
            for path, iface, props in proxies:
                if iface == GATT_DESC and not self._create_descriptor(path, props):
                    ok = False
                    break
        has_profile = any(iface == GATT_PROFILE for _, iface, _ in proxies)
        if not ok or (not self.services and not has_profile):
            raise failed("No valid service object found")

    def _create_characteristic(self, path: str, props: dict[str, Variant]) -> bool:
        service_path = props.get("Service")
        if service_path is None or service_path.signature != "o":
            log.info("app %s: characteristic %s has no Service path", self.path, path)
            return False
        service = next((s for s in self.services if s.path == service_path.value), None)
        if service is None:
            log.info("app %s: no service %s for characteristic %s", self.path, service_path.value, path)
            return False
        flags = props.get("Flags")
        if flags is None or flags.signature != "as" or not flags.value:
            # parse_chrc_flags() reads the first element unconditionally: an empty list fails too.
            log.info("app %s: characteristic %s has no valid Flags", self.path, path)
            return False
        properties = ext = 0
        for flag in flags.value:
            bits = CHRC_FLAGS.get(flag)
            if bits is None:
                log.info("app %s: Invalid characteristic flag: %s", self.path, flag)
                return False
            properties |= bits[0]
            ext |= bits[1]
        if ext:
            properties |= PROP_EXT
        chrc = ServerCharacteristic(path, props, service, list(flags.value), properties, ext)
        service.attr_count += 2 + (1 if properties & (PROP_NOTIFY | PROP_INDICATE) else 0) + (1 if ext else 0)
        service.characteristics.append(chrc)
        self.characteristics[path] = chrc
        return True

    def _create_descriptor(self, path: str, props: dict[str, Variant]) -> bool:
        chrc_path = props.get("Characteristic")
        if chrc_path is None or chrc_path.signature != "o":
            return False
        chrc = self.characteristics.get(chrc_path.value)
        if chrc is None:
            return False
        flags = props.get("Flags")
        if flags is None or flags.signature != "as" or not flags.value:
            return False
        if any(f not in DESC_FLAGS for f in flags.value):
            log.info("app %s: Invalid descriptor flag in %s", self.path, flags.value)
            return False
        desc = ServerDescriptor(path, props, chrc)
        chrc.descriptors.append(desc)
        chrc.service.descriptors.append(desc)
        chrc.service.attr_count += 1
        return True

    # ----- database entry (database_add_app) -------------------------------------------------

    def add_to_database(self, used: list[tuple[int, int]]) -> list[tuple[str, str, int]]:
        """Assigns handles; `used` are the (start, end) ranges of other apps. Returns the handle
        write-backs [(path, interface, handle)] bluetoothd sends for objects whose Handle was 0."""
        writes: list[tuple[str, str, int]] = []
        taken = list(used)
        for service in self.services:
            uuid = _uuid_prop(service.props)
            primary = service.props.get("Primary")
            includes = service.props.get("Includes")
            wanted = service.props.get("Handle")
            if uuid is None or uuid in (GAP_UUID, GATT_UUID) or primary is None or primary.signature != "b":
                raise failed("Failed to create entry in database")
            if includes is not None and includes.signature != "ao":
                raise failed("Failed to create entry in database")
            if wanted is not None and wanted.signature != "q":
                raise failed("Failed to create entry in database")
            service.uuid, service.primary = uuid, bool(primary.value)
            service.includes = list(includes.value) if includes is not None else []
            count = service.attr_count + len(service.includes)
            start = wanted.value if wanted is not None and wanted.value else _free_range(taken, count)
            end = start + count - 1
            if start == 0 or end > 0xFFFF or any(s <= end and start <= e for s, e in taken):
                raise failed("Failed to create entry in database")
            taken.append((start, end))
            service.handle, service.end_handle = start, end
            if wanted is not None and not wanted.value:
                writes.append((service.path, GATT_SERVICE, start))
            next_handle = start + 1 + len(service.includes)
            for chrc in service.characteristics:
                next_handle = self._add_characteristic(chrc, next_handle, writes)
            orphans = [d for d in service.descriptors if d.characteristic.service is not service]
            if orphans:
                raise failed("Failed to create entry in database")
        self.registered = True
        return writes

    def _add_characteristic(self, chrc: ServerCharacteristic, handle: int, writes: list) -> int:
        uuid = _uuid_prop(chrc.props)
        wanted = chrc.props.get("Handle")
        if uuid is None or (wanted is not None and wanted.signature != "q"):
            raise failed("Failed to create entry in database")
        chrc.uuid = uuid
        chrc.handle = handle + 1  # the value handle follows the declaration
        if wanted is not None and wanted.value:
            chrc.handle = wanted.value
        elif wanted is not None:
            writes.append((chrc.path, GATT_CHRC, chrc.handle))
        handle += 2
        if chrc.has(PROP_NOTIFY) or chrc.has(PROP_INDICATE):
            chrc.ccc_handle = handle
            handle += 1
        if chrc.ext_properties:
            handle += 1
        for desc in chrc.descriptors:
            d_uuid = _uuid_prop(desc.props)
            d_wanted = desc.props.get("Handle")
            if d_uuid is None:
                raise failed("Failed to create entry in database")
            desc.uuid = d_uuid
            desc.handle = d_wanted.value if d_wanted is not None and d_wanted.signature == "q" and d_wanted.value \
                else handle
            if d_wanted is not None and not d_wanted.value:
                writes.append((desc.path, GATT_DESC, desc.handle))
            handle += 1
        return handle

    def find_characteristic(self, uuid: str) -> ServerCharacteristic | None:
        for service in self.services:
            for chrc in service.characteristics:
                if chrc.uuid == uuid:
                    return chrc
        return None


def _uuid_prop(props: dict[str, Variant]) -> str | None:
    v = props.get("UUID")
    if v is None or v.signature != "s":
        return None
    return normalize_uuid(v.value)


def _free_range(taken: list[tuple[int, int]], count: int) -> int:
    """The lowest start handle at or after FIRST_APP_HANDLE with `count` free handles."""
    start = FIRST_APP_HANDLE
    for s, e in sorted(taken):
        if start + count - 1 < s:
            break
        start = max(start, e + 1)
    return start if start + count - 1 <= 0xFFFF else 0
