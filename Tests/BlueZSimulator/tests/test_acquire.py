"""AcquireNotify / AcquireWrite (src/gatt-client.c): socket type, one datagram per value, drop on EAGAIN, HUP."""
from __future__ import annotations

import asyncio
import json
import select
import socket

import pytest
from conftest import Recorder, dev_path
from sim_process import CONTROL, CallFailed, bluez, call, connect, counters, simulator, wait_for
from dbus_fast import Message, MessageType

A1 = "org.bluez.Adapter1"
D1 = "org.bluez.Device1"
GC = "org.bluez.GattCharacteristic1"
ADDR = "33:00:00:00:00:01"
SPEC = {
    "address": ADDR, "interval_ms": 20, "mtu": 185, "advert": {"flags": 6},
    "gatt": [{"uuid": "bb00", "characteristics": [
        {"uuid": "bb01", "flags": ["notify"]},
        {"uuid": "bb02", "flags": ["write-without-response"]},
        {"uuid": "bb03", "flags": ["read", "write"]},
    ]}],
}


def run(coro):
    asyncio.run(asyncio.wait_for(coro, 120))


async def setup(address: str):
    bus = await connect(address)
    rec = await Recorder.attach(bus)
    await call(bus, CONTROL, "AddPeripheral", "s", [json.dumps(SPEC)])
    await call(bus, bluez("/org/bluez/hci0", A1), "StartDiscovery")
    dev = dev_path(ADDR)
    await rec.wait(lambda m, p, b: m == "InterfacesAdded" and b[0] == dev, what="device")
    await call(bus, bluez(dev, D1), "Connect")
    await rec.wait(lambda m, p, b: p == dev and b[1].get("ServicesResolved") is not None, what="resolved")
    chars = {b[1][GC]["UUID"].value[4:8]: b[0] for m, p, b in rec.signals if m == "InterfacesAdded" and GC in b[1]}
    return bus, rec, chars


async def acquire(bus, path: str, member: str) -> tuple[socket.socket, int]:
    reply = await bus.call(Message(destination="org.bluez", path=path, interface=GC, member=member,
                                   signature="a{sv}", body=[{}]))
    if reply.message_type is MessageType.ERROR:
        raise CallFailed(reply.error_name, reply.body[0])
    fd = reply.unix_fds[reply.body[0]]
    return socket.socket(fileno=fd), reply.body[1]


async def expect(coro, name: str, text: str | None = None) -> None:
    with pytest.raises(CallFailed) as info:
        await coro
    assert info.value.name == f"org.bluez.Error.{name}", info.value
    if text is not None:
        assert info.value.text == text


def test_acquire_notify_delivers_datagrams_and_hups_on_disconnect():
    async def body():
        async with simulator() as address:
            bus, rec, chars = await setup(address)
            sock, mtu = await acquire(bus, chars["bb01"], "AcquireNotify")
            assert mtu == 185
            assert sock.type & 0xF == socket.SOCK_SEQPACKET
            assert rec.changes(chars["bb01"], "NotifyAcquired") == [True]
            await expect(acquire(bus, chars["bb01"], "AcquireNotify"), "NotPermitted")
            await expect(call(bus, bluez(chars["bb01"], GC), "StartNotify"), "NotPermitted")
            for i in range(3):
                await call(bus, CONTROL, "Notify", "ssay", [ADDR, "bb01", bytes([i]) * 3])
            sock.settimeout(5)
            assert [sock.recv(512) for _ in range(3)] == [b"\x00" * 3, b"\x01" * 3, b"\x02" * 3]
            await call(bus, CONTROL, "Disconnect", "ss", [ADDR, "remote"])
            poller = select.poll()
            poller.register(sock, select.POLLIN)
            events = poller.poll(5000)
            assert events and (events[0][1] & select.POLLHUP or sock.recv(512) == b"")
            sock.close()
    run(body())


def test_acquire_errors():
    async def body():
        async with simulator() as address:
            bus, rec, chars = await setup(address)
            await expect(acquire(bus, chars["bb03"], "AcquireNotify"), "NotSupported")
            await expect(acquire(bus, chars["bb03"], "AcquireWrite"), "NotSupported")
            await call(bus, bluez(chars["bb01"], GC), "StartNotify")
            await expect(acquire(bus, chars["bb01"], "AcquireNotify"), "InProgress")
            await call(bus, bluez(dev_path(ADDR), D1), "Disconnect")
            await expect(acquire(bus, chars["bb02"], "AcquireWrite"), "Failed")
    run(body())


async def _unsubscribed(bus) -> bool:
    (subscribed,) = await call(bus, CONTROL, "IsSubscribed", "ss", [ADDR, "bb01"])
    return not subscribed


def test_release_by_closing_the_fd():
    async def body():
        async with simulator() as address:
            bus, rec, chars = await setup(address)
            sock, _ = await acquire(bus, chars["bb01"], "AcquireNotify")
            sock.close()
            await rec.wait(lambda m, p, b: p == chars["bb01"] and "NotifyAcquired" in b[1]
                           and not b[1]["NotifyAcquired"].value, what="NotifyAcquired=false")
            await wait_for(lambda: _unsubscribed(bus), 10, "CCC disabled")
            assert rec.changes(chars["bb01"], "Notifying") == []  # AcquireNotify never touches Notifying
    run(body())


def test_undrained_socket_drops_on_eagain_and_counts():
    async def body():
        async with simulator() as address:
            bus, rec, chars = await setup(address)
            sock, _ = await acquire(bus, chars["bb01"], "AcquireNotify")
            total = 5000
            await call(bus, CONTROL, "StartNotifying", "ssdus", [ADDR, "bb01", 50000.0, total, "seq-timestamp"])

            async def finished():
                c = await counters(bus)
                return c.get("notifications_sent", 0) + c.get("notify_dropped_eagain", 0) >= total
            await wait_for(finished, 60, "burst to finish")
            c = await counters(bus)
            assert c["notify_dropped_eagain"] > 0
            sock.setblocking(False)
            received = []
            while True:
                try:
                    received.append(sock.recv(64))
                except BlockingIOError:
                    break
            assert len(received) == c["notifications_sent"]
            seqs = [int.from_bytes(d[:4], "little") for d in received]
            assert seqs == sorted(seqs) and seqs[0] == 0  # what arrives is in order; the rest was dropped
            sock.close()
    run(body())


def test_acquire_write_turns_datagrams_into_write_commands():
    async def body():
        async with simulator() as address:
            bus, rec, chars = await setup(address)
            sock, mtu = await acquire(bus, chars["bb02"], "AcquireWrite")
            assert mtu == 185
            await expect(call(bus, bluez(chars["bb02"], GC), "WriteValue", "aya{sv}", [b"x", {}]),
                         "NotPermitted", "Write acquired")
            for chunk in (b"a", b"bb", b"ccc"):
                sock.send(chunk)

            async def three():
                (w,) = await call(bus, CONTROL, "GetWrites", "ss", [ADDR, "bb02"])
                return len(w) == 3
            await wait_for(three, 10, "three writes")
            (writes,) = await call(bus, CONTROL, "GetWrites", "ss", [ADDR, "bb02"])
            assert [(bytes(x[0]), x[2]) for x in writes] == [(b"a", "command"), (b"bb", "command"),
                                                           (b"ccc", "command")]
            sock.close()
            await rec.wait(lambda m, p, b: p == chars["bb02"] and "WriteAcquired" in b[1]
                           and not b[1]["WriteAcquired"].value, what="WriteAcquired=false")
    run(body())
