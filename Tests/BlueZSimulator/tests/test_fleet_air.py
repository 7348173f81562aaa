"""Several adapters on one bluetoothd, and one peripheral heard by several of them with a signal per adapter
(scenarios/fleet.yaml): per-adapter Device1 objects and RSSI, discovery's RSSI threshold per adapter, connections
from any adapter to the same GATT database, one link at a time, and moving out of an adapter's range."""
from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest
from conftest import HERE, LOCK, Recorder, dev_path, scenario
from dbus_fast import Variant
from gatt_app import GattApp
from sim_process import CONTROL, CallFailed, bluez, call, connect, counters, register_app, simulator, wait_for

A1 = "org.bluez.Adapter1"
D1 = "org.bluez.Device1"
C1 = "org.bluez.GattCharacteristic1"
PROPS = "org.freedesktop.DBus.Properties"
OM = ("org.bluez", "/", "org.freedesktop.DBus.ObjectManager")
THERMOMETER = "A4:C1:38:00:00:01"
LOCK_CONTROL = "0000fff1-0000-1000-8000-00805f9b34fb"
LOCK_STATE = "0000fff2-0000-1000-8000-00805f9b34fb"
ADAPTERS = ("hci0", "hci1", "hci2")


def run(coro):
    asyncio.run(asyncio.wait_for(coro, 90))


async def discover_everywhere(bus) -> None:
    for name in ADAPTERS:
        await call(bus, bluez(f"/org/bluez/{name}", A1), "StartDiscovery")


async def device_property(bus, address: str, adapter: str, prop: str):
    (value,) = await call(bus, bluez(dev_path(address, adapter), PROPS), "Get", "ss", [D1, prop])
    return value.value


async def objects(bus) -> dict:
    (managed,) = await call(bus, OM, "GetManagedObjects")
    return managed


async def wait_for_device(bus, address: str, adapter: str) -> None:
    path = dev_path(address, adapter)

    async def exported() -> bool:
        return path in await objects(bus)
    await wait_for(exported, 20, f"{address} on {adapter}")


async def reports_on(bus, adapter: str, address: str) -> int:
    return (await counters(bus)).get(f"adv_reports.{adapter}.{address}", 0)


async def more_reports(bus, adapter: str, address: str, count: int = 3) -> None:
    start = await reports_on(bus, adapter, address)

    async def heard() -> bool:
        return await reports_on(bus, adapter, address) >= start + count
    await wait_for(heard, 20, f"{count} more reports of {address} on {adapter}")


async def char_path(bus, address: str, adapter: str, uuid: str) -> str:
    prefix = dev_path(address, adapter) + "/"
    for path, ifaces in (await objects(bus)).items():
        if path.startswith(prefix) and C1 in ifaces and ifaces[C1]["UUID"].value == uuid:
            return path
    raise AssertionError(f"no characteristic {uuid} under {prefix}")


async def connect_and_resolve(bus, rec: Recorder, adapter: str) -> None:
    path = dev_path(LOCK, adapter)
    await call(bus, bluez(path, D1), "Connect")
    await rec.wait(lambda m, p, b: p == path and m == "PropertiesChanged" and "ServicesResolved" in b[1]
                   and b[1]["ServicesResolved"].value, what=f"services resolved on {adapter}")


def test_adapters_come_from_the_scenario_and_the_command_line_wins():
    async def body():
        async with simulator("--scenario", scenario("fleet")) as address:
            bus = await connect(address)
            managed = await objects(bus)
            adapters = {p: i[A1]["Address"].value for p, i in managed.items() if A1 in i}
            assert adapters == {"/org/bluez/hci0": "00:AA:01:00:00:00", "/org/bluez/hci1": "00:AA:01:01:00:01",
                                "/org/bluez/hci2": "00:AA:01:02:00:02"}
        async with simulator("--adapters", "hci0,hci3") as address:
            bus = await connect(address)
            managed = await objects(bus)
            assert sorted(p for p, i in managed.items() if A1 in i) == ["/org/bluez/hci0", "/org/bluez/hci3"]
            assert managed["/org/bluez/hci3"][A1]["Address"].value == "00:AA:01:03:00:03"
            assert "org.bluez.GattManager1" in managed["/org/bluez/hci3"]
    run(body())


def test_bad_adapter_lists_are_refused_before_anything_starts():
    for bad in ("hci0,hci0", "hci0,usb1", "hci01"):
        result = subprocess.run([sys.executable, "-m", "bluezsim", "--adapters", bad], cwd=str(HERE),
                                capture_output=True, text=True, timeout=30)
        assert result.returncode == 2, (bad, result.stderr)
        assert "adapters:" in result.stderr and not result.stdout


def test_each_adapter_hears_the_peripheral_with_its_own_signal():
    async def body():
        async with simulator("--scenario", scenario("fleet")) as address:
            bus = await connect(address)
            await discover_everywhere(bus)
            for name, rssi in zip(ADAPTERS, (-55, -70, -85)):
                await wait_for_device(bus, LOCK, name)
                assert await device_property(bus, LOCK, name, "RSSI") == rssi
                assert await device_property(bus, LOCK, name, "Adapter") == f"/org/bluez/{name}"
            (signals,) = await call(bus, CONTROL, "GetSignals", "s", [LOCK])
            assert signals == {"hci0": -55, "hci1": -70, "hci2": -85}
            # The thermometer is on the air of hci1 and hci2 only.
            await wait_for_device(bus, THERMOMETER, "hci2")
            await more_reports(bus, "hci2", THERMOMETER)
            assert await reports_on(bus, "hci0", THERMOMETER) == 0
            assert dev_path(THERMOMETER, "hci0") not in await objects(bus)
            (listed,) = await call(bus, CONTROL, "ListPeripherals")
            assert sorted(x for x in listed if x.endswith(THERMOMETER)) == [f"hci1/{THERMOMETER}",
                                                                              f"hci2/{THERMOMETER}"]
    run(body())


def test_moving_one_adapters_signal_follows_the_rssi_threshold_of_that_adapter_only():
    async def body():
        async with simulator("--scenario", scenario("fleet")) as address:
            bus = await connect(address)
            rec = await Recorder.attach(bus)
            await discover_everywhere(bus)
            for name in ADAPTERS:
                await wait_for_device(bus, LOCK, name)
            hci0, hci1 = dev_path(LOCK, "hci0"), dev_path(LOCK, "hci1")
            await call(bus, CONTROL, "SetRSSI", "sn", [f"hci1/{LOCK}", -64])  # 6 dB: under the 8 dB threshold
            await more_reports(bus, "hci1", LOCK)
            assert rec.changes(hci1, "RSSI") == []
            assert await device_property(bus, LOCK, "hci1", "RSSI") == -70
            await call(bus, CONTROL, "SetRSSI", "sn", [f"hci1/{LOCK}", -50])  # 20 dB: signalled
            await rec.wait(lambda m, p, b: p == hci1 and "RSSI" in b[1], what="hci1's RSSI")
            assert rec.changes(hci1, "RSSI") == [-50]
            await more_reports(bus, "hci0", LOCK)
            assert rec.changes(hci0, "RSSI") == []
            (signals,) = await call(bus, CONTROL, "GetSignals", "s", [LOCK])
            assert signals == {"hci0": -55, "hci1": -50, "hci2": -85}
            # A bare address moves every adapter's signal.
            await call(bus, CONTROL, "SetRSSI", "sn", [LOCK, -95])
            for name in ADAPTERS:
                path = dev_path(LOCK, name)
                await rec.wait(lambda m, p, b: p == path and "RSSI" in b[1] and b[1]["RSSI"].value == -95,
                               what=f"-95 on {name}")
    run(body())


def test_a_connection_from_any_adapter_reaches_the_same_gatt_database():
    async def body():
        async with simulator("--scenario", scenario("fleet")) as address:
            bus = await connect(address)
            rec = await Recorder.attach(bus)
            await discover_everywhere(bus)
            for name in ("hci2", "hci0"):
                await wait_for_device(bus, LOCK, name)
            await connect_and_resolve(bus, rec, "hci2")
            (link,) = await call(bus, CONTROL, "GetLinkAdapter", "s", [LOCK])
            assert link == "hci2"
            state2 = await char_path(bus, LOCK, "hci2", LOCK_STATE)
            await call(bus, bluez(state2, C1), "StartNotify")
            await call(bus, bluez(await char_path(bus, LOCK, "hci2", LOCK_CONTROL), C1), "WriteValue", "aya{sv}",
                       [b"unlock", {}])
            await rec.wait(lambda m, p, b: p == state2 and "Value" in b[1] and bytes(b[1]["Value"].value) == b"unlock",
                           what="the notification on hci2")
            (writes,) = await call(bus, CONTROL, "GetWrites", "ss", [LOCK, LOCK_CONTROL])
            assert [bytes(w[0]) for w in writes] == [b"unlock"]
            await call(bus, bluez(dev_path(LOCK, "hci2"), D1), "Disconnect")
            # From hci0 now: the same peripheral, its state as hci2 left it.
            await connect_and_resolve(bus, rec, "hci0")
            (value,) = await call(bus, bluez(await char_path(bus, LOCK, "hci0", LOCK_STATE), C1), "ReadValue",
                                  "a{sv}", [{}])
            assert bytes(value) == b"unlock"
            (link,) = await call(bus, CONTROL, "GetLinkAdapter", "s", [LOCK])
            assert link == "hci0"
            # hci2 forgetting its (disconnected) device leaves hci0's notifications alone.
            state0 = await char_path(bus, LOCK, "hci0", LOCK_STATE)
            await call(bus, bluez(state0, C1), "StartNotify")
            await call(bus, bluez("/org/bluez/hci2", A1), "RemoveDevice", "o", [dev_path(LOCK, "hci2")])
            await call(bus, bluez(await char_path(bus, LOCK, "hci0", LOCK_CONTROL), C1), "WriteValue", "aya{sv}",
                       [b"lock", {}])
            await rec.wait(lambda m, p, b: p == state0 and "Value" in b[1] and bytes(b[1]["Value"].value) == b"lock",
                           what="the notification on hci0")
    run(body())


def test_a_second_adapter_cannot_connect_while_another_holds_the_link():
    async def body():
        async with simulator("--scenario", scenario("fleet")) as address:
            bus = await connect(address)
            rec = await Recorder.attach(bus)
            await discover_everywhere(bus)
            for name in ("hci0", "hci1"):
                await wait_for_device(bus, LOCK, name)
            await connect_and_resolve(bus, rec, "hci0")
            with pytest.raises(CallFailed) as info:
                await call(bus, bluez(dev_path(LOCK, "hci1"), D1), "Connect")
            assert (info.value.name, info.value.text) == ("org.bluez.Error.Failed", "le-connection-abort-by-local")
            assert (await counters(bus))["connect_refused_link_busy"] == 1
            assert await device_property(bus, LOCK, "hci0", "Connected") is True
            assert await device_property(bus, LOCK, "hci1", "Connected") is False
            # Once hci0 lets go, hci1 connects.
            await call(bus, bluez(dev_path(LOCK, "hci0"), D1), "Disconnect")
            await connect_and_resolve(bus, rec, "hci1")
            (link,) = await call(bus, CONTROL, "GetLinkAdapter", "s", [LOCK])
            assert link == "hci1"
    run(body())


def test_out_of_an_adapters_range_the_link_drops_and_reports_stop_until_it_is_back():
    async def body():
        async with simulator("--scenario", scenario("fleet")) as address:
            bus = await connect(address)
            rec = await Recorder.attach(bus)
            await discover_everywhere(bus)
            for name in ("hci0", "hci1"):
                await wait_for_device(bus, LOCK, name)
            await connect_and_resolve(bus, rec, "hci0")
            await call(bus, CONTROL, "SetHeard", "ssb", [LOCK, "hci0", False])
            assert rec.changes(dev_path(LOCK, "hci0"), "Connected")[-1] is False
            before = await reports_on(bus, "hci0", LOCK)
            await more_reports(bus, "hci1", LOCK, 5)
            assert await reports_on(bus, "hci0", LOCK) == before
            with pytest.raises(CallFailed) as info:
                await call(bus, bluez(dev_path(LOCK, "hci0"), D1), "Connect")
            assert info.value.text == "le-connection-abort-by-local"
            await connect_and_resolve(bus, rec, "hci1")  # the other adapter takes the link
            await call(bus, CONTROL, "SetHeard", "ssb", [LOCK, "hci0", True])
            await more_reports(bus, "hci0", LOCK)
    run(body())


def test_control_refuses_adapters_that_do_not_hear_the_peripheral():
    async def body():
        async with simulator("--scenario", scenario("fleet")) as address:
            bus = await connect(address)
            refused = [
                ("SetRSSI", "sn", [f"hci0/{THERMOMETER}", -50]),
                ("SetRSSI", "sn", [LOCK, -128]),
                ("SetHeard", "ssb", [THERMOMETER, "hci0", False]),
                ("AddPeripheral", "s", [json.dumps({"address": "11:22:33:44:55:66", "adapters": ["hci0", "hci7"]})]),
                ("AddPeripheral", "s", [json.dumps({"address": "11:22:33:44:55:66", "adapters": ["hci0"],
                                                    "rssi": {"hci1": -50}})]),
                ("AddPeripheral", "s", [json.dumps({"address": LOCK, "adapter": "hci2"})]),
            ]
            for member, signature, args in refused:
                with pytest.raises(CallFailed) as info:
                    await call(bus, CONTROL, member, signature, args)
                assert info.value.name == "org.gattway.Simulator1.Error", (member, args)
            (address_added,) = await call(bus, CONTROL, "AddPeripheral", "s", [json.dumps(
                {"address": "11:22:33:44:55:66", "adapters": ["hci1", "hci2"], "rssi": {"hci2": -40}})])
            (signals,) = await call(bus, CONTROL, "GetSignals", "s", [address_added])
            assert signals == {"hci1": -60, "hci2": -40}
    run(body())


def test_an_advertisement_on_one_adapter_is_on_the_air_of_every_other_adapter():
    service = "6e400001-b5a3-f393-e0a9-e50e24dcca9e"
    tx = "6e400003-b5a3-f393-e0a9-e50e24dcca9e"

    async def body():
        async with simulator("--adapters", "hci0,hci1,hci2") as address:
            bus = await connect(address)
            rec = await Recorder.attach(bus)
            app = GattApp(bus)
            app.char(app.service("s", service), "tx", tx, ["read", "notify"], value=b"from hci2")
            await register_app(bus, "/app", adapter="hci2")
            app.advert("/adv", {"Type": Variant("s", "peripheral"), "ServiceUUIDs": Variant("as", [service])})
            await call(bus, bluez("/org/bluez/hci2", "org.bluez.LEAdvertisingManager1"), "RegisterAdvertisement",
                       "oa{sv}", ["/adv", {}])
            hci2 = "00:AA:01:02:00:02"
            # Both other adapters find hci2's advertisement and connect to its app at the same time, each over a
            # link of its own (a local GATT server serves several centrals).
            for name in ("hci0", "hci1"):
                # A filter: the advertisement carries no discoverable flags (the adapter is not discoverable).
                await call(bus, bluez(f"/org/bluez/{name}", A1), "SetDiscoveryFilter", "a{sv}",
                           [{"Transport": Variant("s", "le")}])
                await call(bus, bluez(f"/org/bluez/{name}", A1), "StartDiscovery")
            for name in ("hci0", "hci1"):
                await wait_for_device(bus, hci2, name)
                path = dev_path(hci2, name)
                await call(bus, bluez(path, D1), "Connect")
                await rec.wait(lambda m, p, b: p == path and "ServicesResolved" in b[1]
                               and b[1]["ServicesResolved"].value, what=f"services of hci2's app on {name}")
            for name in ("hci0", "hci1"):
                (value,) = await call(bus, bluez(await char_path(bus, hci2, name, tx), C1), "ReadValue", "a{sv}",
                                      [{}])
                assert bytes(value) == b"from hci2"
            assert dev_path(hci2, "hci2") not in await objects(bus)  # an adapter does not hear itself
    run(body())


def test_a_scenario_peripheral_on_an_adapter_the_scenario_lacks_is_refused(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("adapters: [hci0]\nperipherals:\n  - {address: 'AA:BB:CC:DD:EE:01', rssi: {hci0: -50, hci1: -60}}\n")
    result = subprocess.run([sys.executable, "-m", "bluezsim", "--scenario", str(bad)], cwd=str(HERE),
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 2, result.stderr
    assert "unknown adapter 'hci1'" in result.stderr and not result.stdout


def test_a_bluetoothd_restart_frees_the_link_for_any_adapter():
    async def body():
        async with simulator("--scenario", scenario("fleet")) as address:
            bus = await connect(address)
            rec = await Recorder.attach(bus)
            await discover_everywhere(bus)
            await wait_for_device(bus, LOCK, "hci1")
            await connect_and_resolve(bus, rec, "hci1")
            await call(bus, CONTROL, "RestartBluetoothd", "d", [0.1])
            (link,) = await call(bus, CONTROL, "GetLinkAdapter", "s", [LOCK])
            assert link == ""
            rec = await Recorder.attach(bus)  # the restarted bluetoothd is a new sender
            await discover_everywhere(bus)
            await wait_for_device(bus, LOCK, "hci2")
            await connect_and_resolve(bus, rec, "hci2")
            (link,) = await call(bus, CONTROL, "GetLinkAdapter", "s", [LOCK])
            assert link == "hci2"
    run(body())
