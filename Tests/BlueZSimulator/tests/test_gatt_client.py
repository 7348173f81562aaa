"""GATT client rules (src/gatt-client.c): reads, writes, ATT error mapping, notify sessions, MTU."""
from __future__ import annotations

import asyncio
import json

import pytest
from conftest import LOCK, LOCK_CONTROL, LOCK_STATE, Recorder, dev_path, scenario
from sim_process import CONTROL, CallFailed, bluez, call, connect, counter_reaches, counters, simulator, v

A1 = "org.bluez.Adapter1"
D1 = "org.bluez.Device1"
GC = "org.bluez.GattCharacteristic1"
ADDR = "22:00:00:00:00:01"
SVC = "0000aa00-0000-1000-8000-00805f9b34fb"


def u(short: str) -> str:
    return f"0000{short}-0000-1000-8000-00805f9b34fb"


def make_spec(latency_ms: int = 0, extra_chars: list | None = None) -> dict:
    return {
        "address": ADDR, "interval_ms": 20, "att_latency_ms": latency_ms, "mtu": 100,
        "advert": {"flags": 6, "name": "GATT test"},
        "gatt": [{"uuid": "aa00", "characteristics": [
            {"uuid": "aa01", "flags": ["read", "write", "write-without-response"], "value": "hex:00112233",
             "behaviour": {"kind": "echo"}},
            {"uuid": "aa02", "flags": ["notify", "read"], "value": "hex:01"},
            {"uuid": "aa03", "flags": ["read"], "behaviour": {"kind": "counter"}},
            {"uuid": "aa04", "flags": ["indicate"]},
        ] + (extra_chars or [])}],
    }


def run(coro):
    asyncio.run(asyncio.wait_for(coro, 90))


class World:
    """A simulator with one test peripheral, discovered and (optionally) connected."""

    def __init__(self, bus, rec: Recorder) -> None:
        self.bus = bus
        self.rec = rec
        self.dev = dev_path(ADDR)

    def char_path(self, uuid: str) -> str:
        for m, p, b in self.rec.signals:
            if m == "InterfacesAdded" and GC in b[1] and b[1][GC]["UUID"].value == u(uuid):
                return b[0]
        raise AssertionError(f"no characteristic {uuid}")

    async def connect(self) -> None:
        since = len(self.rec.signals)
        await call(self.bus, bluez(self.dev, D1), "Connect")
        await self.rec.wait(lambda m, p, b: p == self.dev and "ServicesResolved" in b[1]
                            and b[1]["ServicesResolved"].value, what="resolved", since=since)

    async def read(self, uuid: str, offset: int | None = None, bus=None) -> bytes:
        opts = {} if offset is None else {"offset": v("q", offset)}
        (value,) = await call(bus or self.bus, bluez(self.char_path(uuid), GC), "ReadValue", "a{sv}", [opts])
        return bytes(value)

    async def write(self, uuid: str, value: bytes, **options) -> None:
        opts = {k: v("q" if k == "offset" else "s", val) for k, val in options.items()}
        await call(self.bus, bluez(self.char_path(uuid), GC), "WriteValue", "aya{sv}", [value, opts])

    async def char_call(self, uuid: str, member: str, bus=None) -> list:
        return await call(bus or self.bus, bluez(self.char_path(uuid), GC), member)


async def world(address: str, spec: dict, connected: bool = True) -> World:
    bus = await connect(address)
    rec = await Recorder.attach(bus)
    await call(bus, CONTROL, "AddPeripheral", "s", [json.dumps(spec)])
    await call(bus, bluez("/org/bluez/hci0", A1), "StartDiscovery")
    w = World(bus, rec)
    await rec.wait(lambda m, p, b: m == "InterfacesAdded" and b[0] == w.dev, what="device")
    if connected:
        await w.connect()
    return w


async def expect(coro, name: str, text: str | None = None) -> None:
    with pytest.raises(CallFailed) as info:
        await coro
    assert info.value.name == f"org.bluez.Error.{name}", info.value
    if text is not None:
        assert info.value.text == text


def test_read_updates_value_and_honours_offset():
    async def body():
        async with simulator() as address:
            w = await world(address, make_spec())
            assert await w.read("aa01") == bytes.fromhex("00112233")
            assert w.rec.changes(w.char_path("aa01"), "Value")[-1] == bytes.fromhex("00112233")
            # chrc_read_cb(): bytes read at an offset are stored there in the cached value, and the reply
            # is the cached value read back from that offset.
            path = w.char_path("aa01")
            await call(w.bus, CONTROL, "SetValue", "ssay", [ADDR, "aa01", bytes.fromhex("0011aabb")])
            assert await w.read("aa01", offset=2) == bytes.fromhex("aabb")
            assert w.rec.changes(path, "Value")[-1] == bytes.fromhex("0011aabb")
            # A shorter value read at the offset overwrites only its own bytes: the cached tail stays,
            # in the cache and in the reply.
            await call(w.bus, CONTROL, "SetValue", "ssay", [ADDR, "aa01", bytes.fromhex("0011cc")])
            assert await w.read("aa01", offset=2) == bytes.fromhex("ccbb")
            assert w.rec.changes(path, "Value")[-1] == bytes.fromhex("0011ccbb")
            await expect(w.read("aa01", offset=9), "InvalidArguments", "Invalid offset")
    run(body())


def test_not_connected_errors():
    async def body():
        async with simulator() as address:
            w = await world(address, make_spec())
            await call(w.bus, bluez(w.dev, D1), "Disconnect")
            await expect(w.read("aa01"), "Failed", "Not connected")
            await expect(w.write("aa01", b"x"), "Failed", "Not connected")
            props = (await call(w.bus, bluez(w.char_path("aa01"), "org.freedesktop.DBus.Properties"),
                                "GetAll", "s", [GC]))[0]
            assert "MTU" not in props  # only while connected
    run(body())


def test_reads_coalesce_or_are_in_progress():
    async def body():
        async with simulator() as address:
            w = await world(address, make_spec(latency_ms=300))
            other = await connect(address)
            a = asyncio.ensure_future(w.read("aa03"))
            await counter_reaches(w.bus, "calls.GattCharacteristic1.ReadValue", 1)
            b = asyncio.ensure_future(w.read("aa03", bus=other))
            await counter_reaches(w.bus, "calls.GattCharacteristic1.ReadValue", 2)
            await expect(w.read("aa03", offset=1), "InProgress")
            assert await a == await b == (1).to_bytes(4, "little")
            assert (await counters(w.bus))["reads_coalesced"] == 1
    run(body())


def test_one_write_in_flight_and_procedures():
    async def body():
        async with simulator() as address:
            w = await world(address, make_spec(latency_ms=300))
            first = asyncio.ensure_future(w.write("aa01", b"one", type="request"))
            await counter_reaches(w.bus, "writes", 1)  # counted once the write is under way
            await expect(w.write("aa01", b"two", type="request"), "InProgress")
            await first
            await expect(w.write("aa01", b"x", type="command", offset=1), "NotSupported")
            await w.write("aa01", b"cmd", type="command")
            await w.write("aa01", b"rel", type="reliable")
            await w.write("aa01", b"dflt")  # no type + 'write' flag: a write request
            (writes,) = await call(w.bus, CONTROL, "GetWrites", "ss", [ADDR, "aa01"])
            assert [(bytes(x[0]), x[2]) for x in writes] == [
                (b"one", "request"), (b"cmd", "command"), (b"rel", "reliable"), (b"dflt", "request")]
    run(body())


@pytest.mark.parametrize("code,name,text", [
    (0x03, "NotPermitted", "Write not permitted"),
    (0x05, "NotPermitted", "Not paired"),
    (0x0F, "NotPermitted", "Not paired"),
    (0x07, "InvalidArguments", "Invalid offset"),
    (0x0D, "InvalidArguments", "Invalid Length"),
    (0x08, "NotAuthorized", None),
    (0x06, "NotSupported", None),
    (0x80, "Failed", "Operation failed with ATT error: 0x80"),
    (0x0E, "Failed", "Operation failed with ATT error: 0x0e"),
])
def test_att_errors_map_to_bluez_errors(code, name, text):
    async def body():
        async with simulator() as address:
            spec = make_spec(extra_chars=[{"uuid": "aa05", "flags": ["write"],
                                           "behaviour": {"kind": "refuse", "code": code}}])
            w = await world(address, spec)
            await expect(w.write("aa05", b"x"), name, text)
    run(body())


def test_lock_accepts_commands_and_refuses_jam():
    async def body():
        async with simulator("--scenario", scenario("lock")) as address:
            bus = await connect(address)
            rec = await Recorder.attach(bus)
            await call(bus, bluez("/org/bluez/hci0", A1), "StartDiscovery")
            path = dev_path(LOCK)
            await rec.wait(lambda m, p, b: m == "InterfacesAdded" and b[0] == path, what="lock")
            await call(bus, bluez(path, D1), "Connect")
            await rec.wait(lambda m, p, b: p == path and "ServicesResolved" in b[1], what="resolved")
            chars = {b[1][GC]["UUID"].value: b[0] for m, p, b in rec.signals if m == "InterfacesAdded" and GC in b[1]}
            await call(bus, bluez(chars[LOCK_STATE], GC), "StartNotify")
            await call(bus, bluez(chars[LOCK_CONTROL], GC), "WriteValue", "aya{sv}", [b"unlock", {}])
            await rec.wait(lambda m, p, b: p == chars[LOCK_STATE] and "Value" in b[1], what="state notification")
            await expect(call(bus, bluez(chars[LOCK_CONTROL], GC), "WriteValue", "aya{sv}", [b"jam", {}]),
                         "Failed", "Operation failed with ATT error: 0x80")
            (value,) = await call(bus, bluez(chars[LOCK_STATE], GC), "ReadValue", "a{sv}", [{}])
            assert bytes(value) == b"unlock"
    run(body())


def test_notify_sessions_and_one_signal_per_notification():
    async def body():
        async with simulator() as address:
            w = await world(address, make_spec())
            other = await connect(address)
            path = w.char_path("aa02")
            await expect(w.char_call("aa03", "StartNotify"), "NotSupported")
            await expect(w.char_call("aa02", "StopNotify"), "Failed", "No notify session started")
            await w.char_call("aa02", "StartNotify")
            await w.char_call("aa02", "StartNotify")  # repeat from the same client: success
            await w.char_call("aa02", "StartNotify", bus=other)
            assert w.rec.changes(path, "Notifying") == [True]
            for _ in range(5):
                await call(w.bus, CONTROL, "Notify", "ssay", [ADDR, "aa02", b"\x07"])  # identical bytes
            await w.rec.wait(lambda m, p, b: len(w.rec.changes(path, "Value")) >= 5, what="5 values")
            assert w.rec.changes(path, "Value") == [b"\x07"] * 5
            await w.char_call("aa02", "StopNotify")
            assert w.rec.changes(path, "Notifying") == [True]  # the other client's session remains
            other.disconnect()  # its session ends when it leaves the bus
            await w.rec.wait(lambda m, p, b: p == path and "Notifying" in b[1] and not b[1]["Notifying"].value,
                             what="Notifying=false")
            (subscribed,) = await call(w.bus, CONTROL, "IsSubscribed", "ss", [ADDR, "aa02"])
            assert subscribed is False
    run(body())


def test_start_notify_while_disconnected_subscribes_on_reconnect():
    async def body():
        async with simulator() as address:
            w = await world(address, make_spec())
            await call(w.bus, bluez(w.dev, D1), "Disconnect")
            await w.char_call("aa04", "StartNotify")  # indicate-only characteristic
            (subscribed,) = await call(w.bus, CONTROL, "IsSubscribed", "ss", [ADDR, "aa04"])
            assert subscribed is False
            await w.connect()
            path = w.char_path("aa04")
            await w.rec.wait(lambda m, p, b: p == path and "Notifying" in b[1], what="Notifying")
            (subscribed,) = await call(w.bus, CONTROL, "IsSubscribed", "ss", [ADDR, "aa04"])
            assert subscribed is True
    run(body())


def test_mtu_property_follows_the_link():
    async def body():
        async with simulator() as address:
            w = await world(address, make_spec())
            path = w.char_path("aa01")
            await call(w.bus, bluez(w.dev, D1), "Disconnect")
            await w.rec.wait(lambda m, p, b: p == path and "MTU" in b[2], what="MTU invalidated")
            await call(w.bus, CONTROL, "SetMTU", "sq", [ADDR, 64])
            await w.connect()
            assert w.rec.changes(path, "MTU")[-1] == 64, w.rec.changes(path, "MTU")
    run(body())


def test_link_loss_fails_pending_operations():
    async def body():
        async with simulator() as address:
            w = await world(address, make_spec(latency_ms=2000))
            pending = asyncio.ensure_future(w.write("aa01", b"late", type="request"))
            await counter_reaches(w.bus, "writes", 1)
            await call(w.bus, CONTROL, "Disconnect", "ss", [ADDR, "timeout"])
            # disc_att_send_op() completes the cut request without a PDU: process_error() makes it 0x0E.
            await expect(pending, "Failed", "Operation failed with ATT error: 0x0e")
    run(body())


def test_link_loss_fails_a_pending_read_with_unlikely_error():
    async def body():
        async with simulator() as address:
            w = await world(address, make_spec(latency_ms=2000))
            pending = asyncio.ensure_future(w.read("aa01"))
            await asyncio.sleep(0)  # lets the read send its call first; the bus keeps their order
            await expect(w.read("aa01", offset=1), "InProgress")  # the first read is on the link now
            await call(w.bus, CONTROL, "Disconnect", "ss", [ADDR, "remote"])
            await expect(pending, "Failed", "Operation failed with ATT error: 0x0e")
    run(body())


def test_client_handles_from_5_69_are_declaration_handles():
    async def body():
        async with simulator("--bluez-version", "5.69") as address:
            w = await world(address, make_spec())
            objs = (await call(w.bus, bluez("/", "org.freedesktop.DBus.ObjectManager"), "GetManagedObjects"))[0]
            path = w.char_path("aa01")
            # characteristic_get_handle() answers chrc->handle, the declaration handle that also names
            # the object path; the value handle is the one after it.
            handle = objs[path][GC]["Handle"].value
            assert path.endswith(f"/char{handle:04x}")
            service_path = objs[path][GC]["Service"].value
            assert objs[service_path]["org.bluez.GattService1"]["Handle"].value == handle - 1
    run(body())
