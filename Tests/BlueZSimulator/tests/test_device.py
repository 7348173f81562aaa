"""Device1 connection model (src/device.c)."""
from __future__ import annotations

import asyncio

import pytest
from conftest import LOCK, POLAR, Recorder, dev_path, scenario
from sim_process import CONTROL, CallFailed, bluez, call, connect, counter_reaches, counters, simulator

A1 = "org.bluez.Adapter1"
D1 = "org.bluez.Device1"
GC = "org.bluez.GattCharacteristic1"


def run(coro):
    asyncio.run(asyncio.wait_for(coro, 90))


async def discovered(bus, rec: Recorder, address: str) -> str:
    await call(bus, bluez("/org/bluez/hci0", A1), "StartDiscovery")
    path = dev_path(address)
    await rec.wait(lambda m, p, body: m == "InterfacesAdded" and body[0] == path, what=address)
    return path


def resolved(path):
    return lambda m, p, body: p == path and "ServicesResolved" in body[1] and body[1]["ServicesResolved"].value


def test_connect_replies_then_gatt_objects_then_services_resolved():
    async def body():
        async with simulator("--scenario", scenario("heart-rate")) as address:
            bus = await connect(address)
            rec = await Recorder.attach(bus)
            path = await discovered(bus, rec, POLAR)
            rec.clear()
            await call(bus, bluez(path, D1), "Connect")
            at_reply = len(rec.signals)
            await rec.wait(resolved(path), what="ServicesResolved")
            first_gatt = rec.index(lambda m, p, b: m == "InterfacesAdded" and b[0].startswith(path + "/service"))
            done = rec.index(resolved(path))
            connected = rec.index(lambda m, p, b: p == path and "Connected" in b[1] and b[1]["Connected"].value)
            assert connected < at_reply <= first_gatt < done
            # MTU is on characteristics while connected, with the negotiated value.
            added = [b for m, p, b in rec.signals if m == "InterfacesAdded" and GC in b[1]]
            assert added and all(b[1][GC]["MTU"].value == 232 for b in added)
            # Connect while connected succeeds at once.
            await call(bus, bluez(path, D1), "Connect")
    run(body())


def test_concurrent_connect_and_failures_carry_reasons():
    async def body():
        async with simulator("--scenario", scenario("lock")) as address:
            bus = await connect(address)
            rec = await Recorder.attach(bus)
            path = await discovered(bus, rec, LOCK)
            await call(bus, CONTROL, "FailConnect", "ssu", [LOCK, "le-connection-abort-by-remote", 1])
            with pytest.raises(CallFailed) as info:
                await call(bus, bluez(path, D1), "Connect")
            assert (info.value.name, info.value.text) == ("org.bluez.Error.Failed", "le-connection-abort-by-remote")
            await call(bus, CONTROL, "SetConnectHang", "sb", [LOCK, True])
            attempts = (await counters(bus))["connect_attempts"]
            first = asyncio.ensure_future(call(bus, bluez(path, D1), "Connect"))
            await counter_reaches(bus, "connect_attempts", attempts + 1)  # the first attempt is under way
            with pytest.raises(CallFailed) as info:  # device_connect_le() -EALREADY, as strerror()
                await call(bus, bluez(path, D1), "Connect")
            assert (info.value.name, info.value.text) == ("org.bluez.Error.Failed", "Operation already in progress")
            await call(bus, bluez(path, D1), "Disconnect")  # cancels the pending attempt
            with pytest.raises(CallFailed) as info:
                await first
            assert (info.value.name, info.value.text) == ("org.bluez.Error.Failed", "br-connection-canceled")
            await call(bus, CONTROL, "SetConnectHang", "sb", [LOCK, False])
            await call(bus, bluez(path, D1), "Connect")
    run(body())


def test_disconnect_order_and_cache_always():
    async def body():
        async with simulator("--scenario", scenario("lock")) as address:
            bus = await connect(address)
            rec = await Recorder.attach(bus)
            path = await discovered(bus, rec, LOCK)
            await call(bus, bluez(path, D1), "Disconnect")  # not connected: still success
            await call(bus, bluez(path, D1), "Connect")
            await rec.wait(resolved(path), what="resolved")
            rec.clear()
            await call(bus, CONTROL, "Disconnect", "ss", [LOCK, "remote"])
            sr = rec.index(lambda m, p, b: p == path and "ServicesResolved" in b[1])
            cn = rec.index(lambda m, p, b: p == path and "Connected" in b[1])
            assert 0 <= sr < cn
            assert rec.index(lambda m, p, b: m == "Disconnected") == -1  # 5.83+ only
            assert rec.index(lambda m, p, b: m == "InterfacesRemoved") == -1  # Cache=always keeps GATT objects
            # Reconnect reuses the cached objects: no InterfacesAdded, ServicesResolved again.
            await call(bus, bluez(path, D1), "Connect")
            await rec.wait(resolved(path), what="resolved again")
            assert rec.index(lambda m, p, b: m == "InterfacesAdded") == -1
    run(body())


def test_disconnected_signal_with_newer_bluez():
    async def body():
        async with simulator("--scenario", scenario("lock"), "--bluez-version", "5.83") as address:
            bus = await connect(address)
            rec = await Recorder.attach(bus)
            path = await discovered(bus, rec, LOCK)
            await call(bus, bluez(path, D1), "Connect")
            await rec.wait(resolved(path), what="resolved")
            rec.clear()
            await call(bus, CONTROL, "Disconnect", "ss", [LOCK, "timeout"])
            await rec.wait(lambda m, p, b: p == path and "Connected" in b[1], what="Connected=false")
            sr = rec.index(lambda m, p, b: p == path and "ServicesResolved" in b[1])
            dc = rec.index(lambda m, p, b: m == "Disconnected" and p == path)
            cn = rec.index(lambda m, p, b: p == path and "Connected" in b[1])
            assert 0 <= sr < dc < cn
            assert rec.signals[dc][2] == ["org.bluez.Reason.Timeout", "Connection timed out"]
    run(body())


def test_cache_no_removes_gatt_objects():
    async def body():
        async with simulator("--scenario", scenario("lock"), "--gatt-cache", "no") as address:
            bus = await connect(address)
            rec = await Recorder.attach(bus)
            path = await discovered(bus, rec, LOCK)
            await call(bus, bluez(path, D1), "Connect")
            await rec.wait(resolved(path), what="resolved")
            await call(bus, bluez(path, D1), "Disconnect")
            await rec.wait(lambda m, p, b: m == "InterfacesRemoved" and b[0].startswith(path + "/"), what="removal")
    run(body())
