"""ATT operations of bluetoothd's local GATT server against a registered app (gatt-database.c).

A `link` is anything playing a connected remote central: the control interface's remote central
or the mirror that shows an hci0 app to hci1 (air.py). A link provides `address`, `device_path`,
`mtu`, `encrypted`, `trusted`, `ccc: dict[ServerCharacteristic, int]` and
`offer(chrc, value, indicate) -> bool` (False when its link buffer is full), plus `has_room()`.
"""
from __future__ import annotations

import logging
import os
import re
import socket
from typing import Any

from dbus_fast import Message, Variant

from .notify_reader import NotifyReader
from .server_app import (GATT_CHRC, GATT_DESC, PROP_INDICATE, PROP_NOTIFY, PROP_READ, PROP_WRITE,
                         PROP_WRITE_WITHOUT_RESP, AppCallError, ServerCharacteristic, ServerDescriptor,
                         call_app, send_app_noreply)

log = logging.getLogger("bluezsim.server")

ATT_READ_NOT_PERMITTED = 0x02
ATT_WRITE_NOT_PERMITTED = 0x03
ATT_INSUFFICIENT_AUTHENTICATION = 0x05
ATT_REQUEST_NOT_SUPPORTED = 0x06
ATT_INVALID_OFFSET = 0x07
ATT_AUTHORIZATION = 0x08
ATT_INVALID_VALUE_LENGTH = 0x0D
ATT_UNLIKELY = 0x0E
ATT_CCC_IMPROPERLY_CONFIGURED = 0xFD
ATT_ALREADY_IN_PROGRESS = 0xFE
MAX_VALUE_LEN = 512  # BT_ATT_MAX_VALUE_LEN
SECURITY_FLAGS = ("encrypt-", "secure-")
ERR = "org.bluez.Error."


def app_error_to_att(name: str, message: str, permission_error: int) -> int:
    """dbus_error_to_att_ecode() of gatt-database.c."""
    if name == ERR + "Failed":
        code = _strtol(message)
        if code is None:
            return 0x80  # the message is not a number: the first application error
        return code if 0x80 <= code <= 0x9F else ATT_UNLIKELY
    return {
        ERR + "NotSupported": ATT_REQUEST_NOT_SUPPORTED,
        ERR + "NotAuthorized": ATT_AUTHORIZATION,
        ERR + "InvalidValueLength": ATT_INVALID_VALUE_LENGTH,
        ERR + "InvalidOffset": ATT_INVALID_OFFSET,
        ERR + "InProgress": ATT_ALREADY_IN_PROGRESS,
        ERR + "NotPermitted": permission_error,
    }.get(name, ATT_UNLIKELY)


_STRTOL_BASE0 = re.compile(r"[ \t\n\v\f\r]*([+-]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)")


def _strtol(text: str) -> int | None:
    """strtol(text, &end, 0) where bluetoothd requires *end == 0: None when text is not all number.
    An empty message parses as 0 (end points at the terminator), which is then out of range."""
    if text == "":
        return 0
    m = _STRTOL_BASE0.fullmatch(text)
    if m is None:
        return None
    digits = m.group(2)
    if digits[:2] in ("0x", "0X"):
        value = int(digits, 16)
    elif digits.startswith("0"):
        value = int(digits, 8)  # a leading 0 means octal to strtol
    else:
        value = int(digits)
    return -value if m.group(1) == "-" else value


def _needs_security(flags: list[str], kind: str) -> bool:
    return any(f.startswith(SECURITY_FLAGS) and f.endswith(kind) for f in flags)


class ServerIO:
    """Reads, writes, CCC writes and notification fan-out for one simulated bluetoothd."""

    def __init__(self, sim: Any, server: Any) -> None:
        self.sim = sim
        self.server = server  # the GattServer holding the registered apps
        self.links: list[Any] = []
        # False: CCC enables use StartNotify even where the version would AcquireNotify (set by the control
        # interface, so one simulator world can serve a local app both ways).
        self.acquire_notify = True

    # ----- options sent to the app (append_options) ------------------------------------------

    @staticmethod
    def options(link: Any, offset: int = 0, prepare_authorize: bool = False) -> dict[str, Variant]:
        opts = {"device": Variant("o", link.device_path)}
        if offset:
            opts["offset"] = Variant("q", offset)
        opts["link"] = Variant("s", "LE")
        if prepare_authorize:
            opts["prepare-authorize"] = Variant("b", True)
        opts["mtu"] = Variant("q", link.mtu)
        return opts

    # ----- read -------------------------------------------------------------------------------

    async def read(self, link: Any, attr: ServerCharacteristic | ServerDescriptor, offset: int,
                   truncate: bool = True) -> tuple[int, bytes]:
        """One ATT Read (offset 0) or Read Blob request; returns (ATT error, value of at most MTU-1).
        `truncate=False` keeps the app's whole answer, for the air mirror whose client does its own PDUs."""
        self.sim.counters["central.reads"] += 1
        flags = attr.flags
        is_chrc = isinstance(attr, ServerCharacteristic)
        readable = attr.has(PROP_READ) if is_chrc else any(f.endswith("read") for f in flags)
        if not readable:
            return ATT_READ_NOT_PERMITTED, b""
        if _needs_security(flags, "read") and not link.encrypted:
            return ATT_INSUFFICIENT_AUTHENTICATION, b""
        iface = GATT_CHRC if is_chrc else GATT_DESC
        app = attr.app if is_chrc else attr.characteristic.app
        try:
            reply = await call_app(self.sim.bus, app.owner, attr.path, iface, "ReadValue", "a{sv}",
                                   [self.options(link, offset)])
        except AppCallError as e:
            return app_error_to_att(e.name, e.message, ATT_READ_NOT_PERMITTED), b""
        if reply.signature != "ay":
            log.info("Invalid return value received for \"ReadValue\" from %s", attr.path)
            return ATT_REQUEST_NOT_SUPPORTED, b""
        value = bytes(reply.body[0][:MAX_VALUE_LEN])
        return 0, value[: link.mtu - 1] if truncate else value

    async def read_long(self, link: Any, attr: ServerCharacteristic | ServerDescriptor) -> tuple[int, bytes]:
        """Read then Read Blob with growing offsets until a response shorter than MTU-1, as a central does."""
        out = bytearray()
        while True:
            code, part = await self.read(link, attr, len(out))
            if code:
                return code, bytes(out)
            out += part
            if len(part) < link.mtu - 1 or len(out) >= MAX_VALUE_LEN:
                return 0, bytes(out)

    # ----- write ------------------------------------------------------------------------------

    async def write(self, link: Any, attr: ServerCharacteristic | ServerDescriptor, value: bytes,
                    kind: str, offset: int = 0) -> int:
        """kind: "request" (Write Request, long write when it does not fit), "command" (Write
        Command, never answered), "prepared"/"reliable" (Prepare Write pieces then Execute)."""
        self.sim.counters[f"central.writes.{kind}"] += 1
        is_chrc = isinstance(attr, ServerCharacteristic)
        if kind == "command":
            if not is_chrc or not attr.has(PROP_WRITE_WITHOUT_RESP):
                self.sim.counters["central.write_commands_ignored"] += 1
                return 0  # a Write Command is never answered, not even with an error
            await self._deliver_write(link, attr, value, 0, wait=False)
            return 0
        writable = (attr.has(PROP_WRITE) or attr.has(PROP_WRITE_WITHOUT_RESP) or attr.ext_properties & 1) \
            if is_chrc else any(f.endswith("write") for f in attr.flags)
        if not writable:
            return ATT_WRITE_NOT_PERMITTED
        if _needs_security(attr.flags, "write") and not link.encrypted:
            return ATT_INSUFFICIENT_AUTHENTICATION
        if kind == "request" and offset == 0 and len(value) <= link.mtu - 3:
            return await self._deliver_write(link, attr, value, 0,
                                             wait=not (is_chrc and attr.has(PROP_WRITE_WITHOUT_RESP)))
        return await self._prepared_write(link, attr, value, offset)

    async def _prepared_write(self, link: Any, attr: Any, value: bytes, offset: int) -> int:
        """Prepare Write pieces of MTU-5 bytes, then Execute Write, as bluetoothd 5.66 serves them: only the first
        piece of an `authorize` attribute is judged by the app (prepare-authorize; chrc_write_cb sets
        prep_authorized until the execute), contiguous pieces of one attribute are joined in the prepare queue
        (store_prep_data in src/shared/gatt-server.c), and the execute makes one WriteValue per joined run, at
        the run's starting offset (exec_next_prep_write)."""
        piece = max(1, link.mtu - 5)  # Prepare Write Request: opcode, handle, offset
        pieces = [(offset + i, value[i:i + piece]) for i in range(0, max(len(value), 1), piece)]
        authorize = attr.authorize if isinstance(attr, ServerCharacteristic) else "authorize" in attr.flags
        if authorize and not link.trusted:
            first_offset, first_chunk = pieces[0]
            code = await self._deliver_write(link, attr, first_chunk, first_offset, wait=True, prepare_authorize=True)
            if code:
                return code
        if offset + len(value) > MAX_VALUE_LEN:
            return ATT_INVALID_VALUE_LENGTH if offset <= MAX_VALUE_LEN else ATT_INVALID_OFFSET
        return await self._deliver_write(link, attr, value, offset, wait=True)

    async def _deliver_write(self, link: Any, attr: Any, value: bytes, offset: int, wait: bool,
                             prepare_authorize: bool = False) -> int:
        is_chrc = isinstance(attr, ServerCharacteristic)
        app = attr.app if is_chrc else attr.characteristic.app
        if is_chrc and attr.exposes_write_acquired and not prepare_authorize:
            return await self._write_acquired(link, attr, value)
        body = [bytes(value), self.options(link, offset, prepare_authorize)]
        iface = GATT_CHRC if is_chrc else GATT_DESC
        if not wait:
            # bluetoothd sends the call without a reply handler and acknowledges the ATT write at once.
            self.sim.bus.send(Message(destination=app.owner, path=attr.path, interface=iface,
                                      member="WriteValue", signature="aya{sv}", body=body))
            return 0
        try:
            await call_app(self.sim.bus, app.owner, attr.path, iface, "WriteValue", "aya{sv}", body)
        except AppCallError as e:
            return app_error_to_att(e.name, e.message, ATT_WRITE_NOT_PERMITTED)
        return 0

    async def _write_acquired(self, link: Any, chrc: ServerCharacteristic, value: bytes) -> int:
        key = self.reader_key(link)
        sock = chrc.write_sockets.get(key)
        if sock is None:
            try:
                reply = await call_app(self.sim.bus, chrc.app.owner, chrc.path, GATT_CHRC, "AcquireWrite",
                                       "a{sv}", [self.options(link)])
                fd = reply.unix_fds[reply.body[0]] if reply.signature == "hq" and reply.unix_fds else None
            except AppCallError as e:
                log.info("Failed to acquire write: %s", e.name)
                return ATT_UNLIKELY
            if fd is None:
                log.info("Invalid AcquireWrite response from %s", chrc.path)
                return ATT_UNLIKELY
            sock = chrc.write_sockets.get(key)
            if sock is None:
                sock = chrc.write_sockets[key] = socket.socket(fileno=fd)
                sock.setblocking(False)
            else:
                os.close(fd)  # a concurrent write acquired one meanwhile
        try:
            sock.send(value, socket.MSG_NOSIGNAL)
        except OSError as e:
            log.info("Unable to write: %s", e)
            self.sim.counters["server.write_socket_errors"] += 1
            sock.close()
            chrc.write_sockets.pop(key, None)
            return ATT_UNLIKELY
        return 0

    # ----- CCC (ccc_write_cb) -----------------------------------------------------------------

    async def write_ccc(self, link: Any, chrc: ServerCharacteristic, value: int) -> int:
        if not (chrc.has(PROP_NOTIFY) or chrc.has(PROP_INDICATE)):
            return ATT_WRITE_NOT_PERMITTED  # there is no CCC descriptor to write
        if value and (_needs_security(chrc.flags, "notify") or _needs_security(chrc.flags, "indicate")) \
                and not link.encrypted:
            return ATT_INSUFFICIENT_AUTHENTICATION
        previous = link.ccc.get(chrc, 0)
        if value == 0:
            if previous:
                del link.ccc[chrc]
                self._unsubscribed(chrc, link)
            return 0
        if value > 2 or (value == 1 and not chrc.has(PROP_NOTIFY)) or (value == 2 and not chrc.has(PROP_INDICATE)):
            return ATT_CCC_IMPROPERLY_CONFIGURED
        link.ccc[chrc] = value
        if previous:
            return 0  # only the mode changed; the app already notifies
        if self.reader_key(link) in chrc.notify_readers:
            chrc.notify_count += 1
            return 0
        if chrc.exposes_notify_acquired and self.sim.version_tuple >= (5, 48) and self.acquire_notify:
            # bluetoothd answers the CCC write at once and finishes AcquireNotify in the background. (Before 5.48
            # gatt-database.c knew no AcquireNotify for a local characteristic and always used StartNotify.)
            self.sim.spawn(self._acquire_notify(link, chrc))
            return 0
        self._start_notify(chrc)
        return 0

    def reader_key(self, link: Any) -> Any:
        """5.69+ keeps one AcquireNotify socket per connected device; 5.66 one per characteristic."""
        return link if self.sim.version_tuple >= (5, 69) else None

    def _start_notify(self, chrc: ServerCharacteristic) -> None:
        self.sim.bus.send(Message(destination=chrc.app.owner, path=chrc.path, interface=GATT_CHRC,
                                  member="StartNotify"))
        chrc.notify_count += 1

    async def _acquire_notify(self, link: Any, chrc: ServerCharacteristic) -> None:
        try:
            reply = await call_app(self.sim.bus, chrc.app.owner, chrc.path, GATT_CHRC, "AcquireNotify",
                                   "a{sv}", [self.options(link)])
        except AppCallError as e:
            log.info("Failed to acquire notify: %s", e.name)
            self.sim.counters["server.acquire_notify_failed"] += 1
            if e.name in (ERR + "Failed", "org.freedesktop.DBus.Error.NoReply"):
                return  # gatt-database.c gives up here, without StartNotify
            self._start_notify(chrc)
            return
        if reply.signature != "hq" or not reply.unix_fds:
            log.info("Invalid AcquireNotify response from %s", chrc.path)
            self._start_notify(chrc)
            return
        fd = reply.unix_fds[reply.body[0]]
        key = self.reader_key(link)
        if key in chrc.notify_readers or not chrc.app.registered or link.ccc.get(chrc) is None:
            os.close(fd)  # a concurrent enable won the race, or the app or the link went away meanwhile
            if chrc.app.registered and link.ccc.get(chrc) is not None:
                chrc.notify_count += 1
            return
        chrc.notify_readers[key] = NotifyReader(self, chrc, fd, key)
        chrc.notify_count += 1
        self.sim.counters["server.notify_acquired"] += 1

    def _unsubscribed(self, chrc: ServerCharacteristic, link: Any) -> None:
        if not chrc.notify_count:
            return
        if self.reader_key(link) is not None:
            reader = chrc.notify_readers.pop(link, None)
            if reader is not None:  # 5.69+: that device's socket closes (the app sees HUP)
                reader.close()
                chrc.notify_count -= 1
                return
        chrc.notify_count -= 1
        if chrc.notify_count:
            return
        reader = chrc.notify_readers.pop(None, None)
        if reader is not None:
            reader.close()  # the app sees HUP on its end
            return
        if chrc.app.registered:
            send_app_noreply(self.sim.bus, chrc.app.owner, chrc.path, GATT_CHRC, "StopNotify")

    def link_closed(self, link: Any) -> None:
        """Disconnect of an unbonded central: every CCC it enabled is cleared as if written 0."""
        for chrc in list(link.ccc):
            del link.ccc[chrc]
            self._unsubscribed(chrc, link)
        if self.reader_key(link) is not None:  # 5.69+: the device's AcquireWrite sockets shut down
            for app in self.server.apps:
                for chrc in app.characteristics.values():
                    sock = chrc.write_sockets.pop(link, None)
                    if sock is not None:
                        sock.close()
        if link in self.links:
            self.links.remove(link)

    # ----- notifications (send_notification_to_devices) --------------------------------------

    def notify(self, chrc: ServerCharacteristic, value: bytes, only: Any = None) -> bool:
        """Fans one value out to every link whose CCC is enabled (or to `only` when given); False when
        some link was full."""
        value = value[:MAX_VALUE_LEN]
        all_taken = True
        for link in self.links:
            if only is not None and link is not only:
                continue
            mode = link.ccc.get(chrc)
            if mode and not link.offer(chrc, value, not (mode & 1)):
                all_taken = False
        return all_taken

    def confirm(self, chrc: ServerCharacteristic) -> None:
        """The remote confirmed an indication: conf_cb() calls the app's Confirm (no reply)."""
        if chrc.app.registered:
            send_app_noreply(self.sim.bus, chrc.app.owner, chrc.path, GATT_CHRC, "Confirm")

    def links_have_room(self, chrc: ServerCharacteristic, only: Any = None) -> bool:
        return all(link.has_room() for link in self.links
                   if link.ccc.get(chrc) and (only is None or link is only))

    def socket_target(self, key: Any) -> Any:
        """Where a value read from an AcquireNotify socket goes: sock_io_read() sends it to every
        subscribed device up to 5.75, and from 5.76 only to the device that socket belongs to."""
        return key if self.sim.version_tuple >= (5, 76) else None

    def resume_readers(self) -> None:
        """A link drained: readers paused because of a full link buffer may read again."""
        for link in self.links:
            for chrc in link.ccc:
                for reader in chrc.notify_readers.values():
                    reader.resume()
