"""Adapter1 and discovery rules (src/adapter.c, src/device.c)."""
from __future__ import annotations

import asyncio
import json

import pytest
from conftest import BTHOME, LOCK, POLAR, Recorder, dev_path, scenario
from sim_process import CONTROL, CallFailed, bluez, call, connect, reports_heard, simulator, v

A1 = "org.bluez.Adapter1"
D1 = "org.bluez.Device1"
HCI0 = "/org/bluez/hci0"


def run(coro):
    asyncio.run(asyncio.wait_for(coro, 90))


async def objects(bus) -> dict:
    (objs,) = await call(bus, bluez("/", "org.freedesktop.DBus.ObjectManager"), "GetManagedObjects")
    return objs


async def start(bus, adapter: str = HCI0) -> None:
    await call(bus, bluez(adapter, A1), "StartDiscovery")


async def stop(bus, adapter: str = HCI0) -> None:
    await call(bus, bluez(adapter, A1), "StopDiscovery")


async def set_filter(bus, props: dict, adapter: str = HCI0) -> None:
    await call(bus, bluez(adapter, A1), "SetDiscoveryFilter", "a{sv}", [props])


async def expect_error(coro, name: str, text: str | None = None) -> None:
    with pytest.raises(CallFailed) as info:
        await coro
    assert info.value.name == f"org.bluez.Error.{name}", info.value
    if text is not None:
        assert info.value.text == text


def test_adapters_have_exact_types():
    async def body():
        async with simulator() as address:
            bus = await connect(address)
            objs = await objects(bus)
            for hci in ("hci0", "hci1"):
                props = objs[f"/org/bluez/{hci}"][A1]
                sigs = {k: val.signature for k, val in props.items()}
                assert sigs["Address"] == "s" and sigs["Class"] == "u" and sigs["Powered"] == "b"
                assert sigs["UUIDs"] == "as" and sigs["Discovering"] == "b" and sigs["PowerState"] == "s"
                assert props["Powered"].value is True and props["Discovering"].value is False
    run(body())


def test_session_rules_and_errors():
    async def body():
        async with simulator() as address:
            a, b = await connect(address), await connect(address)
            await expect_error(stop(a), "Failed", "No discovery started")
            await start(a)
            await expect_error(start(a), "InProgress")
            await start(b)  # sessions of different clients are shared
            await stop(a)
            (disc,) = await call(a, bluez(HCI0, "org.freedesktop.DBus.Properties"), "Get", "ss", [A1, "Discovering"])
            assert disc.value is True
            # A client leaving the bus ends its session: discovery stops with the last one.
            rec = await Recorder.attach(a)
            b.disconnect()
            await rec.wait(lambda m, p, body: p == HCI0 and body[1].get("Discovering") is not None
                           and body[1]["Discovering"].value is False, what="Discovering=false")
    run(body())


@pytest.mark.parametrize("props", [
    {"Bogus": v("b", True)},
    {"RSSI": v("i", -60)},
    {"RSSI": v("n", -128)},
    {"RSSI": v("n", 21)},
    {"Pathloss": v("q", 138)},
    {"RSSI": v("n", -60), "Pathloss": v("q", 10)},
    {"Transport": v("s", "radio")},
    {"UUIDs": v("as", ["not-a-uuid"])},
])
def test_filter_validation_is_invalid_arguments(props):
    async def body():
        async with simulator() as address:
            bus = await connect(address)
            await expect_error(set_filter(bus, props), "InvalidArguments")
    run(body())


def test_not_powered_is_not_ready():
    async def body():
        async with simulator() as address:
            bus = await connect(address)
            await call(bus, CONTROL, "SetPowered", "sb", ["hci0", False])
            await expect_error(start(bus), "NotReady")
            await expect_error(stop(bus), "NotReady")
            await expect_error(set_filter(bus, {}), "NotReady")
            # remove_device() looks the device up before checking power.
            await expect_error(call(bus, bluez(HCI0, A1), "RemoveDevice", "o", [dev_path(POLAR)]), "DoesNotExist")
    run(body())


def test_devices_appear_with_exact_types_and_absent_optionals():
    async def body():
        async with simulator("--scenario", scenario("demo")) as address:
            bus = await connect(address)
            rec = await Recorder.attach(bus)
            await start(bus)
            for addr in (POLAR, LOCK, BTHOME):
                await rec.wait(lambda m, p, body, a=addr: m == "InterfacesAdded" and body[0] == dev_path(a),
                               what=f"device {addr}")
            objs = await objects(bus)
            polar = objs[dev_path(POLAR)][D1]
            assert polar["ManufacturerData"].signature == "a{qv}"
            assert polar["ManufacturerData"].value[0x006B].signature == "ay"
            assert polar["RSSI"].signature == "n" and polar["TxPower"].signature == "n"
            assert polar["Appearance"].signature == "q" and polar["AdvertisingFlags"].signature == "ay"
            assert polar["Name"].value == "Polar H10 6A3E11" and polar["Alias"].value == "Polar H10 6A3E11"
            assert "0000180d-0000-1000-8000-00805f9b34fb" in polar["UUIDs"].value
            lock = objs[dev_path(LOCK)][D1]
            for absent in ("ManufacturerData", "ServiceData", "TxPower", "Appearance", "Class", "Icon"):
                assert absent not in lock
            bthome = objs[dev_path(BTHOME)][D1]
            assert bthome["ServiceData"].signature == "a{sv}"
            assert "0000fcd2-0000-1000-8000-00805f9b34fb" in bthome["ServiceData"].value
    run(body())


def test_alias_falls_back_to_address_and_resets():
    async def body():
        async with simulator() as address:
            bus = await connect(address)
            await call(bus, CONTROL, "AddPeripheral", "s", [json.dumps(
                {"address": "11:22:33:44:55:66", "advert": {"flags": 6}})])
            rec = await Recorder.attach(bus)
            await start(bus)
            path = dev_path("11:22:33:44:55:66")
            await rec.wait(lambda m, p, body: m == "InterfacesAdded" and body[0] == path, what="device")
            props = (await objects(bus))[path][D1]
            assert "Name" not in props and props["Alias"].value == "11-22-33-44-55-66"
            propsif = bluez(path, "org.freedesktop.DBus.Properties")
            await call(bus, propsif, "Set", "ssv", [D1, "Alias", v("s", "Mine")])
            await call(bus, propsif, "Set", "ssv", [D1, "Alias", v("s", "")])
            assert rec.changes(path, "Alias") == ["Mine", "11-22-33-44-55-66"]
    run(body())


def test_manufacturer_data_merges_per_company_id():
    async def body():
        async with simulator("--scenario", scenario("heart-rate")) as address:
            bus = await connect(address)
            rec = await Recorder.attach(bus)
            await start(bus)
            path = dev_path(POLAR)
            await rec.wait(lambda m, p, body: m == "InterfacesAdded" and body[0] == path, what="device")
            await call(bus, CONTROL, "UpdateAdvert", "ss", [POLAR, json.dumps(
                {"manufacturer_data": {"0x0059": "0102"}})])
            m = await rec.wait(lambda m, p, body: p == path and "ManufacturerData" in body[1], what="merge")
            data = {k: bytes(val.value) for k, val in m[2][1]["ManufacturerData"].value.items()}
            assert data == {0x006B: bytes.fromhex("3f0000"), 0x0059: b"\x01\x02"}
            await call(bus, CONTROL, "UpdateAdvert", "ss", [POLAR, json.dumps(
                {"manufacturer_data": {"0x0059": "0304"}})])
            m = await rec.wait(lambda m, p, body: p == path and "ManufacturerData" in body[1]
                               and 0x0059 in body[1]["ManufacturerData"].value
                               and bytes(body[1]["ManufacturerData"].value[0x0059].value) == b"\x03\x04",
                               what="replace")
            assert 0x006B in m[2][1]["ManufacturerData"].value
            # No change, no signal (DuplicateData is false by default): after more reports of the same data, a
            # change sent as a marker is the only signal, and signals keep their order.
            count = len(rec.changes(path, "ManufacturerData"))
            await reports_heard(bus, POLAR)
            await call(bus, CONTROL, "UpdateAdvert", "ss", [POLAR, json.dumps(
                {"manufacturer_data": {"0x0059": "0506"}})])
            await rec.wait(lambda m, p, body: p == path and "ManufacturerData" in body[1]
                           and 0x0059 in body[1]["ManufacturerData"].value
                           and bytes(body[1]["ManufacturerData"].value[0x0059].value) == b"\x05\x06",
                           what="marker")
            assert len(rec.changes(path, "ManufacturerData")) == count + 1
    run(body())


def test_duplicate_data_resignals_every_report():
    async def body():
        async with simulator("--scenario", scenario("heart-rate")) as address:
            bus = await connect(address)
            rec = await Recorder.attach(bus)
            await set_filter(bus, {"DuplicateData": v("b", True)})
            await start(bus)
            path = dev_path(POLAR)
            for _ in range(3):
                await rec.wait(lambda m, p, body: p == path and "ManufacturerData" in body[1]
                               and len(rec.changes(path, "ManufacturerData")) >= 3, what="3 reports")
    run(body())


def test_rssi_threshold_without_and_with_rssi_filter():
    async def body():
        async with simulator() as address:
            bus = await connect(address)
            addr = "11:22:33:44:55:01"
            await call(bus, CONTROL, "AddPeripheral", "s", [json.dumps(
                {"address": addr, "rssi": -60, "interval_ms": 20, "advert": {"flags": 6}})])
            rec = await Recorder.attach(bus)
            path = dev_path(addr)
            await start(bus)
            await rec.wait(lambda m, p, body: m == "InterfacesAdded" and body[0] == path, what="device")
            await call(bus, CONTROL, "SetRSSI", "sn", [addr, -65])  # moved 5 dBm: below the 8 dBm threshold
            await reports_heard(bus, addr)
            await call(bus, CONTROL, "SetRSSI", "sn", [addr, -70])  # 10 dBm from -60: signalled
            await rec.wait(lambda m, p, body: p == path and "RSSI" in body[1], what="RSSI -70")
            assert rec.changes(path, "RSSI") == [-70]
            # With a filter (any filter) every report is signalled, -72 included.
            await set_filter(bus, {"RSSI": v("n", -100)})
            await call(bus, CONTROL, "SetRSSI", "sn", [addr, -72])
            await rec.wait(lambda m, p, body: p == path and body[1].get("RSSI") is not None
                           and body[1]["RSSI"].value == -72, what="RSSI -72")
    run(body())


def test_stop_invalidates_rssi_and_removes_temporary_non_connectable():
    async def body():
        async with simulator("--scenario", scenario("demo")) as address:
            bus = await connect(address)
            rec = await Recorder.attach(bus)
            await start(bus)
            for addr in (POLAR, BTHOME):
                await rec.wait(lambda m, p, body, a=addr: m == "InterfacesAdded" and body[0] == dev_path(a),
                               what=addr)
            await stop(bus)
            await rec.wait(lambda m, p, body: m == "InterfacesRemoved" and body[0] == dev_path(BTHOME),
                           what="thermometer removed")
            await rec.wait(lambda m, p, body: p == dev_path(POLAR) and "RSSI" in body[2], what="RSSI invalidated")
            objs = await objects(bus)
            assert dev_path(POLAR) in objs and "RSSI" not in objs[dev_path(POLAR)][D1]
            assert "TxPower" not in objs[dev_path(POLAR)][D1]
    run(body())


def test_pattern_and_uuid_filters():
    async def body():
        async with simulator("--scenario", scenario("demo")) as address:
            bus = await connect(address)
            rec = await Recorder.attach(bus)
            await set_filter(bus, {"Pattern": v("s", "d0:0d")})  # strncmp: case-sensitive, matches nothing
            await start(bus)
            await set_filter(bus, {"Pattern": v("s", "D0:0D")})  # address prefix
            await rec.wait(lambda m, p, body: m == "InterfacesAdded" and body[0] == dev_path(LOCK), what="lock")
            await reports_heard(bus, POLAR)
            assert dev_path(POLAR) not in await objects(bus)
            await set_filter(bus, {"Pattern": v("s", "Polar")})  # or prefix of the advertised name
            await rec.wait(lambda m, p, body: m == "InterfacesAdded" and body[0] == dev_path(POLAR), what="polar")
            await call(bus, bluez(HCI0, A1), "RemoveDevice", "o", [dev_path(POLAR)])
            await set_filter(bus, {"UUIDs": v("as", ["180D"])})
            await rec.wait(lambda m, p, body: m == "InterfacesAdded" and body[0] == dev_path(POLAR)
                           and "RSSI" in body[1][D1], what="polar with data")
            # bluetoothd creates the object of a non-matching advertiser but never fills it in.
            await rec.wait(lambda m, p, body: m == "InterfacesAdded" and body[0] == dev_path(BTHOME), what="bthome")
            await reports_heard(bus, BTHOME)
            bthome = (await objects(bus))[dev_path(BTHOME)][D1]
            assert "ServiceData" not in bthome and "RSSI" not in bthome and "Name" not in bthome
    run(body())


def test_non_discoverable_advertiser_needs_a_filter():
    async def body():
        async with simulator() as address:
            bus = await connect(address)
            hidden = "11:22:33:44:55:02"
            await call(bus, CONTROL, "AddPeripheral", "s", [json.dumps(
                {"address": hidden, "interval_ms": 20, "advert": {"flags": 0}})])
            await call(bus, CONTROL, "AddPeripheral", "s", [json.dumps(
                {"address": "11:22:33:44:55:03", "interval_ms": 20, "advert": {"flags": 6}})])
            rec = await Recorder.attach(bus)
            await start(bus)
            await rec.wait(lambda m, p, body: m == "InterfacesAdded" and body[0] == dev_path("11:22:33:44:55:03"),
                           what="discoverable device")
            await reports_heard(bus, hidden)
            assert dev_path(hidden) not in await objects(bus)
            await set_filter(bus, {"Transport": v("s", "le")})
            await rec.wait(lambda m, p, body: m == "InterfacesAdded" and body[0] == dev_path(hidden),
                           what="non-discoverable device once filtered")
    run(body())


def test_remove_device_rules():
    async def body():
        async with simulator("--scenario", scenario("lock")) as address:
            bus = await connect(address)
            rec = await Recorder.attach(bus)
            await expect_error(call(bus, bluez(HCI0, A1), "RemoveDevice", "o", [dev_path(POLAR)]), "DoesNotExist")
            await start(bus)
            path = dev_path(LOCK)
            await rec.wait(lambda m, p, body: m == "InterfacesAdded" and body[0] == path, what="lock")
            await call(bus, bluez(path, D1), "Connect")
            await call(bus, bluez(HCI0, A1), "RemoveDevice", "o", [path])
            connected_false = rec.index(lambda m, p, body: p == path and "Connected" in body[1]
                                        and body[1]["Connected"].value is False)
            removed = rec.index(lambda m, p, body: m == "InterfacesRemoved" and body[0] == path)
            assert 0 <= connected_false < removed
    run(body())


def test_crowd_of_hostile_advertisers_is_served():
    """1,000 random-address advertisers with hostile data: every one becomes a Device object once a
    filter admits non-discoverable ones; invalid UTF-8 names have their non-ASCII bytes turned into
    spaces as eir.c name2utf8() does, empty data stays `ay`."""
    async def body():
        async with simulator("--scenario", scenario("crowd")) as address:
            bus = await connect(address)
            rec = await Recorder.attach(bus)
            await set_filter(bus, {"Transport": v("s", "le")})
            await start(bus)
            await rec.wait(lambda m, p, b: sum(1 for s in rec.signals if s[0] == "InterfacesAdded") >= 1000,
                           timeout=60, what="1000 devices")
            devices = [i[D1] for p, i in (await objects(bus)).items() if D1 in i]
            assert len(devices) == 1000
            assert all(d["AddressType"].value == "random" for d in devices)
            names = [d["Name"].value for d in devices if "Name" in d]
            assert "Gat   (A" in names and "X" * 248 in names  # advertised as 47 61 74 ff fe c3 28 41
            empty = [d for d in devices if "ManufacturerData" in d
                     and any(len(x.value) == 0 for x in d["ManufacturerData"].value.values())]
            assert empty
    run(body())


def test_rssi_filter_is_applied_by_the_kernel_and_pathloss_not_at_all():
    """5.66: RSSI drops reports only when every session sets it (kernel filter); Pathloss never drops."""
    async def body():
        async with simulator() as address:
            bus = await connect(address)
            weak, far = "11:22:33:44:55:10", "11:22:33:44:55:11"
            await call(bus, CONTROL, "AddPeripheral", "s", [json.dumps(
                {"address": weak, "rssi": -80, "interval_ms": 20, "advert": {"flags": 6}})])
            await call(bus, CONTROL, "AddPeripheral", "s", [json.dumps(
                {"address": far, "rssi": -40, "interval_ms": 20, "advert": {"flags": 6, "tx_power": 0}})])
            rec = await Recorder.attach(bus)
            await set_filter(bus, {"RSSI": v("n", -50)})
            await start(bus)
            await rec.wait(lambda m, p, body: m == "InterfacesAdded" and body[0] == dev_path(far), what="strong")
            await reports_heard(bus, weak)
            assert dev_path(weak) not in await objects(bus)
            await set_filter(bus, {"Pathloss": v("q", 5)})  # pathloss of both is > 5, still reported
            await rec.wait(lambda m, p, body: m == "InterfacesAdded" and body[0] == dev_path(weak), what="weak")
    run(body())
