"""org.bluez.GattCharacteristic1 of a remote device, as src/gatt-client.c of 5.66 serves it."""
from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from dbus_fast import DBusError, Message, Variant

from . import errors
from .acquire import AcquiredSocket
from .errors import (ATT_INVALID_OFFSET, ATT_READ_NOT_PERMITTED, ATT_UNLIKELY_ERROR, ATT_WRITE_NOT_PERMITTED,
                     AttError, att_error_to_dbus)
from .interface import Interface, Reply, method

if TYPE_CHECKING:
    from .gatt_client import GattClient, RemoteService
    from .gatt_db import CharModel

OP_TIMEOUT = 30.0  # bt_att request timeout: a peripheral that never answers fails the operation


def _option(options: dict[str, Variant], key: str, sig: str, default: Any) -> Any:
    v = options.get(key)
    if v is None:
        return default
    if v.signature != sig:
        raise errors.invalid_args()
    return v.value


def stored_read_result(cached: bytes, offset: int, data: bytes) -> tuple[bytes, bytes]:
    """chrc_read_cb(): returns (new cached value, ReadValue reply) for `data` read at `offset`.

    The cache is reset when offset is 0; otherwise the bytes are written at `offset` over the cached
    value (gatt_db_attribute_write(): the tail beyond them stays, a gap is zero-filled here where
    bluetoothd leaves it uninitialised). The reply is the cached value read back from `offset`
    (gatt_db_attribute_read()), so it can carry the old tail. An empty result writes nothing, and a
    read back past the end is Invalid Offset."""
    if offset == 0:
        return data, data
    value = cached
    if data:
        base = cached.ljust(offset, b"\0")
        value = base[:offset] + data + base[offset + len(data):]
    if value and offset > len(value):
        raise att_error_to_dbus(ATT_INVALID_OFFSET)
    return value, value[offset:]


class RemoteCharacteristic(Interface):
    name = "org.bluez.GattCharacteristic1"

    def __init__(self, client: "GattClient", service: "RemoteService", model: "CharModel") -> None:
        self.client = client
        self.sim = client.sim
        self.service = service
        self.model = model
        self.path = f"{service.path}/char{model.handle:04x}"
        self.value: bytes | None = None  # unknown until read or notified
        self.notifying = False
        self.sessions: dict[str, bool] = {}  # sender -> subscribed (False while the CCC write runs)
        self.read_op: tuple[int, asyncio.Future] | None = None
        self.write_busy = False
        self.notify_sock: AcquiredSocket | None = None
        self.write_sock: AcquiredSocket | None = None
        self.can_notify = "notify" in model.flags or "indicate" in model.flags
        self.sim.add_client_watch(self._client_left)

    # ----- properties ------------------------------------------------------------------------

    def get_properties(self) -> dict[str, Variant]:
        p = {
            "UUID": Variant("s", self.model.uuid),
            "Service": Variant("o", self.service.path),
        }
        if self.value is not None:
            p["Value"] = Variant("ay", self.value)
        if self.can_notify:
            p["Notifying"] = Variant("b", self.notifying)
        p["Flags"] = Variant("as", list(self.model.flags))
        if "notify" in self.model.flags:  # not for indicate-only characteristics
            p["NotifyAcquired"] = Variant("b", self.notify_sock is not None)
        if "write-without-response" in self.model.flags:
            p["WriteAcquired"] = Variant("b", self.write_sock is not None)
        if self.client.mtu and self.sim.version_tuple >= (5, 62):
            p["MTU"] = Variant("q", self.client.mtu)
        if self.sim.version_tuple >= (5, 69):  # characteristic_get_handle(): the declaration handle
            p["Handle"] = Variant("q", self.model.handle)
        return p

    # ----- link events -----------------------------------------------------------------------

    def link_up(self, announce: bool = True) -> None:
        self.model.remote = self
        if announce and self.sim.version_tuple >= (5, 62):
            self.properties_changed({"MTU": Variant("q", self.client.mtu)})

    def link_down(self) -> None:
        self._let_go_of_model()
        self.close_sockets()
        if self.read_op is not None and not self.read_op[1].done():
            # disc_att_send_op() completes a request cut by the link with an error PDU-less response,
            # which gatt-client.c's process_error() reports as Unlikely Error.
            self.read_op[1].set_exception(att_error_to_dbus(ATT_UNLIKELY_ERROR))
        if self.sim.version_tuple >= (5, 62):
            self.properties_changed({}, ["MTU"])

    async def resubscribe(self) -> None:
        """Sessions started while disconnected (or kept over a reconnect) write the CCC now."""
        if self.sessions and self.device.connected:
            await self._write_ccc(True)
            for sender in self.sessions:
                self.sessions[sender] = True
            self._set_notifying(True)

    def close_sockets(self) -> None:
        for sock in (self.notify_sock, self.write_sock):
            if sock is not None:
                sock.close()

    def forget(self) -> None:
        """The object goes away (cache policy or device removal)."""
        self.close_sockets()
        self._let_go_of_model()
        self.sim.remove_client_watch(self._client_left)

    def _let_go_of_model(self) -> None:
        """The peripheral's characteristic stops delivering here, unless another adapter's link delivers it now."""
        if self.model.remote is self:
            self.model.remote = None

    @property
    def device(self):
        return self.client.device

    def require_connected(self) -> None:
        if not self.device.connected or not self.client.mtu:
            raise errors.failed("Not connected")

    # ----- notifications from the peripheral ----------------------------------------------------

    def deliver(self, value: bytes) -> bool:
        """One notification/indication: to the acquired socket, else one PropertiesChanged(Value)."""
        counters = self.sim.counters
        sock = self.notify_sock
        if sock is not None:
            if sock.send(value):
                counters["notifications_sent"] += 1
                return True
            return False
        if not self.sessions:
            counters["notifications_unsubscribed"] += 1
            return False
        self.value = value
        self.sim.emit_properties_changed(self.path, self.name, {"Value": Variant("ay", value)}, [])
        counters["notifications_sent"] += 1
        return True

    # ----- ReadValue / WriteValue --------------------------------------------------------------

    async def _att(self, coro) -> Any:
        """Runs one ATT procedure against the peripheral; AttError becomes BlueZ's D-Bus error."""
        latency = self.model.peripheral.att_latency
        lost = self.client.link_lost

        async def procedure():
            if latency:
                await asyncio.sleep(latency)  # one request/response round trip on the link
            return await coro

        op = asyncio.ensure_future(procedure())
        try:
            waiters = {op} if lost is None else {op, lost}
            done, _ = await asyncio.wait(waiters, timeout=OP_TIMEOUT, return_when=asyncio.FIRST_COMPLETED)
            if op not in done:
                # Link loss, or the 30 s ATT timeout that shuts the link down: disc_att_send_op()
                # completes the request without a PDU, which process_error() reports as 0x0E.
                op.cancel()
                raise att_error_to_dbus(ATT_UNLIKELY_ERROR)
            return op.result()
        except AttError as e:
            raise att_error_to_dbus(e.code) from None

    @method("a{sv}", "ay")
    async def ReadValue(self, msg: Message, options: dict):
        offset = _option(options, "offset", "q", 0)
        self.require_connected()
        if self.read_op is not None:
            pending_offset, fut = self.read_op
            if pending_offset != offset:
                raise errors.in_progress()
            self.sim.counters["reads_coalesced"] += 1
            return await asyncio.shield(fut)
        fut: asyncio.Future = asyncio.get_running_loop().create_future()
        self.read_op = (offset, fut)
        try:
            if "read" not in self.model.flags:
                raise att_error_to_dbus(ATT_READ_NOT_PERMITTED)
            data = bytes(await self._att(self.model.behaviour.read(offset)))
            self.sim.counters["reads"] += 1
            self.value, answer = stored_read_result(self.value or b"", offset, data)
            self.properties_changed({"Value": Variant("ay", self.value)})
            if not fut.done():
                fut.set_result(answer)
        except DBusError as e:
            if not fut.done():
                fut.set_exception(e)
        except Exception as e:  # a faulty behaviour must still answer the caller
            if not fut.done():
                fut.set_exception(errors.failed(f"Operation failed: {e}"))
        finally:
            self.read_op = None
        fut.exception()  # mark retrieved: coalesced readers may be gone
        return await fut

    @method("aya{sv}", "")
    async def WriteValue(self, msg: Message, value: bytes, options: dict):
        self.require_connected()
        if self.write_sock is not None:
            raise errors.not_permitted("Write acquired")
        if self.write_busy:
            raise errors.in_progress()
        offset = _option(options, "offset", "q", 0)
        kind = _option(options, "type", "s", "")
        for key in ("mtu", "device", "link", "prepare-authorize"):
            options.pop(key, None)  # server-side options, ignored by the client
        flags = self.model.flags
        if kind == "reliable" or (not kind and "reliable-write" in flags):
            procedure = "reliable"
        elif kind == "request" or (not kind and "write" in flags):
            procedure = "request"
        elif kind == "command" or (not kind and "write-without-response" in flags):
            if offset:
                raise errors.not_supported()
            self._command(bytes(value))
            return None
        elif kind:
            raise errors.invalid_args()
        else:
            raise errors.not_supported()
        self.write_busy = True
        try:
            if procedure == "request" and "write" not in flags:
                raise att_error_to_dbus(ATT_WRITE_NOT_PERMITTED)
            self.model.peripheral.record_write(self.model, bytes(value), offset, procedure)
            await self._att(self.model.behaviour.write(bytes(value), offset, procedure))
        finally:
            self.write_busy = False

    def _command(self, value: bytes) -> None:
        """Write Command: no response, so the peripheral's errors never reach the caller."""
        model = self.model
        model.peripheral.record_write(model, value, 0, "command")
        if "write-without-response" not in model.flags:
            self.sim.counters["write_commands_ignored"] += 1
            return

        async def run() -> None:
            try:
                await model.behaviour.write(value, 0, "command")
            except AttError:
                self.sim.counters["write_command_errors_lost"] += 1

        self.sim.spawn(run())

    # ----- StartNotify / StopNotify ----------------------------------------------------------

    async def _write_ccc(self, enable: bool) -> None:
        indicate = "indicate" in self.model.flags and "notify" not in self.model.flags
        await self.model.set_subscribed(enable, indicate)
        if self.device.connected:
            self.model.remote = self
        else:
            self._let_go_of_model()
        if self.model.notifier is not None:
            self.model.notifier.update()

    def _set_notifying(self, on: bool) -> None:
        if on != self.notifying:
            self.notifying = on
            self.properties_changed({"Notifying": Variant("b", on)})

    @method("", "")
    async def StartNotify(self, msg: Message):
        if self.notify_sock is not None:
            raise errors.not_permitted("Notify acquired")
        if not self.can_notify:
            raise errors.not_supported()
        sender = msg.sender
        if sender in self.sessions:
            if not self.sessions[sender]:
                raise errors.in_progress()
            return None
        self.sessions[sender] = False
        if not self.device.connected:
            return None  # subscribed on the next connection
        first = not self.notifying
        if first:
            await self._write_ccc(True)
        if sender in self.sessions:
            self.sessions[sender] = True
            self._set_notifying(True)

    @method("", "")
    async def StopNotify(self, msg: Message):
        if self.sessions.pop(msg.sender, None) is None:
            raise errors.failed("No notify session started")
        await self._sessions_changed()

    async def _sessions_changed(self) -> None:
        if not self.sessions and self.notify_sock is None:
            self._set_notifying(False)
            if self.device.connected:
                await self._write_ccc(False)

    def _client_left(self, name: str) -> None:
        if self.sessions.pop(name, None) is not None:
            self.sim.spawn(self._sessions_changed())

    # ----- AcquireNotify / AcquireWrite ------------------------------------------------------

    @method("a{sv}", "hq")
    async def AcquireNotify(self, msg: Message, options: dict):
        # Checks in characteristic_acquire_notify()'s order.
        self.require_connected()
        if self.notify_sock is not None:
            raise errors.not_permitted("Notify acquired")
        if self.sessions:
            raise errors.in_progress()
        if "notify" not in self.model.flags:
            raise errors.not_supported()
        sock = AcquiredSocket("notify", self.sim.counters, self._notify_released)
        self.notify_sock = sock
        await self._write_ccc(True)
        # Only NotifyAcquired changes: Notifying belongs to StartNotify sessions (register_notify_cb).
        self.properties_changed({"NotifyAcquired": Variant("b", True)})
        return Reply("hq", [0, self.client.mtu], [sock.their_fd()], on_sent=sock.hand_over_done)

    def _notify_released(self) -> None:
        self.notify_sock = None
        self.properties_changed({"NotifyAcquired": Variant("b", False)})
        self.sim.spawn(self._sessions_changed())

    @method("a{sv}", "hq")
    async def AcquireWrite(self, msg: Message, options: dict):
        self.require_connected()
        if self.write_sock is not None:
            raise errors.not_permitted("Write acquired")
        if "write-without-response" not in self.model.flags:
            raise errors.not_supported()
        sock = AcquiredSocket("write", self.sim.counters, self._write_released, on_datagram=self._command)
        self.write_sock = sock
        self.properties_changed({"WriteAcquired": Variant("b", True)})
        return Reply("hq", [0, self.client.mtu], [sock.their_fd()], on_sent=sock.hand_over_done)

    def _write_released(self) -> None:
        self.write_sock = None
        self.properties_changed({"WriteAcquired": Variant("b", False)})
