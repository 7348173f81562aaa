"""The control interface org.gattway.Simulator1: faults, delays, power, restart, counters."""
from __future__ import annotations

import asyncio
import json

import pytest
from conftest import LOCK, Recorder, dev_path, scenario
from sim_process import CONTROL, CallFailed, bluez, call, connect, counters, simulator, wait_for
from dbus_fast import Message, Variant

A1 = "org.bluez.Adapter1"
D1 = "org.bluez.Device1"
HCI0 = "/org/bluez/hci0"


def run(coro):
    asyncio.run(asyncio.wait_for(coro, 90))


def test_inject_error_for_a_count_of_calls():
    async def body():
        async with simulator() as address:
            bus = await connect(address)
            await call(bus, CONTROL, "InjectError", "sssu", ["StartDiscovery", "org.bluez.Error.Failed", "boom", 2])
            for _ in range(2):
                with pytest.raises(CallFailed) as info:
                    await call(bus, bluez(HCI0, A1), "StartDiscovery")
                assert (info.value.name, info.value.text) == ("org.bluez.Error.Failed", "boom")
            await call(bus, bluez(HCI0, A1), "StartDiscovery")
            assert (await counters(bus))["injected_errors"] == 2
    run(body())


def test_reply_delay_does_not_block_other_calls():
    async def body():
        async with simulator() as address:
            bus = await connect(address)
            await call(bus, CONTROL, "SetReplyDelay", "sd", ["org.bluez.Adapter1.StartDiscovery", 2.0])
            slow = asyncio.ensure_future(call(bus, bluez(HCI0, A1), "StartDiscovery"))
            # Served while StartDiscovery is still pending:
            await call(bus, bluez(HCI0, A1), "SetDiscoveryFilter", "a{sv}", [{}])
            assert not slow.done()
            await slow
    run(body())


def test_power_off_stops_discovery_and_drops_links():
    async def body():
        async with simulator("--scenario", scenario("lock")) as address:
            bus = await connect(address)
            rec = await Recorder.attach(bus)
            await call(bus, bluez(HCI0, A1), "StartDiscovery")
            path = dev_path(LOCK)
            await rec.wait(lambda m, p, b: m == "InterfacesAdded" and b[0] == path, what="lock")
            await call(bus, bluez(path, D1), "Connect")
            await call(bus, CONTROL, "SetPowered", "sb", ["hci0", False])
            assert rec.changes(HCI0, "PowerState") == ["on-disabling", "off"]
            assert rec.changes(HCI0, "Discovering") == [True, False]
            assert rec.changes(path, "Connected") == [True, False]
            with pytest.raises(CallFailed) as info:
                await call(bus, bluez(path, D1), "Connect")
            assert (info.value.name, info.value.text) == ("org.bluez.Error.Failed", "Input/output error")
            await call(bus, CONTROL, "SetPowered", "sb", ["hci0", True])
            assert rec.changes(HCI0, "Powered") == [False, True]
    run(body())


def test_restart_bluetoothd_drops_the_name_and_serves_a_fresh_tree():
    async def body():
        async with simulator("--scenario", scenario("lock")) as address:
            bus = await connect(address)
            ctl = await connect(address)
            await call(bus, bluez(HCI0, A1), "StartDiscovery")
            owners = []

            def on_msg(msg: Message):
                if msg.member == "NameOwnerChanged" and msg.body[0] == "org.bluez":
                    owners.append(msg.body[2])
                return False
            bus.add_message_handler(on_msg)
            await bus.call(Message(destination="org.freedesktop.DBus", path="/org/freedesktop/DBus",
                                   interface="org.freedesktop.DBus", member="AddMatch", signature="s",
                                   body=["type='signal',member='NameOwnerChanged',arg0='org.bluez'"]))
            await call(ctl, CONTROL, "RestartBluetoothd", "d", [0.2])
            await wait_for(lambda: len(owners) >= 2, 10, "org.bluez to be owned again")  # other connection
            assert len(owners) == 2 and owners[0] == "" and owners[1] != ""
            (objs,) = await call(bus, bluez("/", "org.freedesktop.DBus.ObjectManager"), "GetManagedObjects")
            assert objs[HCI0][A1]["Discovering"].value is False  # sessions did not survive
            assert not any("/dev_" in p for p in objs)
            assert (await counters(ctl))["bluetoothd_restarts"] == 1
    run(body())


def test_control_errors_are_explicit():
    async def body():
        async with simulator() as address:
            bus = await connect(address)
            for member, sig, args in [
                ("AddPeripheral", "s", ["{not json"]),
                ("AddPeripheral", "s", [json.dumps({"address": "nope"})]),
                ("SetRSSI", "sn", ["AA:AA:AA:AA:AA:AA", -50]),
                ("StartNotifying", "ssdus", ["AA:AA:AA:AA:AA:AA", "2a37", 1.0, 0, "counter"]),
                ("SetPowered", "sb", ["hci9", True]),
            ]:
                with pytest.raises(CallFailed) as info:
                    await call(bus, CONTROL, member, sig, args)
                assert info.value.name == "org.gattway.Simulator1.Error" and info.value.text
    run(body())


def test_remove_peripheral_drops_its_link():
    async def body():
        async with simulator("--scenario", scenario("lock")) as address:
            bus = await connect(address)
            rec = await Recorder.attach(bus)
            await call(bus, bluez(HCI0, A1), "StartDiscovery")
            path = dev_path(LOCK)
            await rec.wait(lambda m, p, b: m == "InterfacesAdded" and b[0] == path, what="lock")
            await call(bus, bluez(path, D1), "Connect")
            await call(bus, CONTROL, "RemovePeripheral", "s", [LOCK])
            assert rec.changes(path, "Connected") == [True, False]
            (listed,) = await call(bus, CONTROL, "ListPeripherals")
            assert listed == []
    run(body())


def test_a_peripheral_back_on_the_air_connects_through_its_existing_device():
    async def body():
        async with simulator("--scenario", scenario("lock")) as address:
            bus = await connect(address)
            rec = await Recorder.attach(bus)
            await call(bus, bluez(HCI0, A1), "StartDiscovery")
            path = dev_path(LOCK)
            await rec.wait(lambda m, p, b: m == "InterfacesAdded" and b[0] == path, what="lock")
            await call(bus, CONTROL, "RemovePeripheral", "s", [LOCK])
            with pytest.raises(CallFailed) as away:
                await call(bus, bluez(path, D1), "Connect")
            assert away.value.text == "le-connection-abort-by-local"
            spec = {"address": LOCK, "connectable": True, "interval_ms": 100, "advert": {"name": "Lock again"},
                    "gatt": [{"uuid": "fff0", "characteristics": [{"uuid": "fff2", "flags": ["read"], "value": "x"}]}]}
            await call(bus, CONTROL, "AddPeripheral", "s", [json.dumps(spec)])
            await rec.wait(lambda m, p, b: m == "PropertiesChanged" and p == path and "Name" in b[1]
                           and b[1]["Name"].value == "Lock again", what="the new advertisement")
            await call(bus, bluez(path, D1), "Connect")
            assert rec.changes(path, "Connected") == [True]
    run(body())


def test_powered_property_and_introspection():
    async def body():
        async with simulator() as address:
            bus = await connect(address)
            rec = await Recorder.attach(bus)
            props = bluez(HCI0, "org.freedesktop.DBus.Properties")
            await call(bus, props, "Set", "ssv", [A1, "Powered", Variant("b", False)])
            assert rec.changes(HCI0, "Powered") == [False]
            with pytest.raises(CallFailed) as info:
                await call(bus, props, "Set", "ssv", [A1, "Address", Variant("s", "x")])
            assert info.value.name == "org.freedesktop.DBus.Error.PropertyReadOnly"
            (xml,) = await call(bus, bluez(HCI0, "org.freedesktop.DBus.Introspectable"), "Introspect")
            assert '<method name="StartDiscovery">' in xml and '<property name="Powered" type="b"' in xml
    run(body())
