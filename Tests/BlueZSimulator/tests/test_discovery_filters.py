"""Discovery filters as bluetoothd 5.66 keeps and applies them (src/adapter.c).

A non-empty filter dict is a filter object even when it repeats the defaults
(parse_discovery_filter_dict()), it outlives StopDiscovery (discovery_remove()), and while any
discovering client has one the scan is a filtered one: advertisers without discoverable flags are
reported (device_is_discoverable()) and RSSI is signalled on every report
(device_set_rssi_with_delta(dev, rssi, 0)).
"""
from __future__ import annotations

import asyncio
import json

from conftest import Recorder, dev_path
from sim_process import CONTROL, bluez, call, connect, counters, simulator, v, wait_for

A1 = "org.bluez.Adapter1"
HCI0 = "/org/bluez/hci0"
HIDDEN = "11:22:33:44:55:0A"  # advertises no discoverable flags
VISIBLE = "11:22:33:44:55:0B"


def run(coro):
    asyncio.run(asyncio.wait_for(coro, 90))


async def add(bus, address: str, flags: int, rssi: int = -60) -> None:
    await call(bus, CONTROL, "AddPeripheral", "s", [json.dumps(
        {"address": address, "rssi": rssi, "interval_ms": 20, "advert": {"flags": flags}})])


async def adapter(bus, member: str, props: dict | None = None) -> None:
    if member == "SetDiscoveryFilter":
        await call(bus, bluez(HCI0, A1), member, "a{sv}", [props])
    else:
        await call(bus, bluez(HCI0, A1), member)


async def reports_since(bus, before: int, count: int) -> bool:
    return (await counters(bus))["adv_reports"] >= before + count


def appeared(address: str):
    return lambda m, p, body: m == "InterfacesAdded" and body[0] == dev_path(address)


def test_a_filter_of_defaults_makes_the_discovery_filtered():
    async def body():
        async with simulator() as address:
            bus = await connect(address)
            await add(bus, HIDDEN, flags=0)
            rec = await Recorder.attach(bus)
            # Every key at its default value: still a filter object, so the scan is filtered and the
            # advertiser without discoverable flags is reported.
            await adapter(bus, "SetDiscoveryFilter", {
                "Transport": v("s", "auto"), "DuplicateData": v("b", False), "Discoverable": v("b", False),
                "UUIDs": v("as", [])})
            await adapter(bus, "StartDiscovery")
            await rec.wait(appeared(HIDDEN), what="the non-discoverable advertiser")
    run(body())


def test_the_filter_outlives_stop_discovery_until_cleared():
    async def body():
        async with simulator() as address:
            bus = await connect(address)
            await add(bus, HIDDEN, flags=0)
            await add(bus, VISIBLE, flags=6)
            rec = await Recorder.attach(bus)
            await adapter(bus, "SetDiscoveryFilter", {"Transport": v("s", "le")})
            await adapter(bus, "StartDiscovery")
            await rec.wait(appeared(HIDDEN), what="the non-discoverable advertiser, filtered")
            await rec.wait(appeared(VISIBLE), what="the discoverable advertiser, removed below")
            await adapter(bus, "StopDiscovery")
            await call(bus, bluez(HCI0, A1), "RemoveDevice", "o", [dev_path(HIDDEN)])
            # The next session of the same client is filtered again without a new SetDiscoveryFilter.
            since = len(rec.signals)
            await adapter(bus, "StartDiscovery")
            await rec.wait(appeared(HIDDEN), what="the advertiser again, the kept filter", since=since)
            # `{}` clears it: the next session is unfiltered. The discoverable advertiser shows that the
            # session runs; the hidden one, reported every 20 ms like it, must not come back.
            await adapter(bus, "StopDiscovery")
            for addr in (HIDDEN, VISIBLE):
                await call(bus, bluez(HCI0, A1), "RemoveDevice", "o", [dev_path(addr)])
            await adapter(bus, "SetDiscoveryFilter", {})
            since = len(rec.signals)
            await adapter(bus, "StartDiscovery")
            await rec.wait(appeared(VISIBLE), what="the discoverable advertiser", since=since)
            # Both advertise every 20 ms: once ten more reports went out, the hidden one sent several.
            reports = (await counters(bus))["adv_reports"]
            await wait_for(lambda: reports_since(bus, reports, 10), what="ten more advertising reports")
            assert not any(m == "InterfacesAdded" and b[0] == dev_path(HIDDEN) for m, p, b in rec.signals[since:])
    run(body())


def test_rssi_is_signalled_on_every_report_of_a_filtered_discovery():
    async def body():
        async with simulator() as address:
            bus = await connect(address)
            await add(bus, VISIBLE, flags=6, rssi=-61)
            rec = await Recorder.attach(bus)
            await adapter(bus, "SetDiscoveryFilter", {"DuplicateData": v("b", False)})
            await adapter(bus, "StartDiscovery")
            path = dev_path(VISIBLE)
            await rec.wait(appeared(VISIBLE), what="device")
            # The RSSI never changes, yet each report signals it again.
            await rec.wait(lambda m, p, b: len(rec.changes(path, "RSSI")) >= 3, what="three RSSI signals")
            assert set(rec.changes(path, "RSSI")) == {-61}
    run(body())
