"""LEAdvertisingManager1 (advertising.c): parsing, the legacy 31-byte budget, instances, Release."""
from __future__ import annotations

import asyncio
import json

import pytest
from dbus_fast import Variant

from gatt_app import GattApp
from sim_process import CONTROL, CallFailed, bluez, call, central, connect, simulator, wait_for

LEAM = bluez("/org/bluez/hci0", "org.bluez.LEAdvertisingManager1")
PARSE_FAILED = ("org.bluez.Error.Failed", "Failed to parse advertisement.")


def run(coro):
    asyncio.run(asyncio.wait_for(coro, 90))


async def register(bus, path: str) -> None:
    await call(bus, LEAM, "RegisterAdvertisement", "oa{sv}", [path, {}])


async def on_air(ctl) -> list[dict]:
    (text,) = await central(ctl, "GetAdvertisements")
    return [a for a in json.loads(text)]


def peripheral(**props) -> dict[str, Variant]:
    base = {"Type": Variant("s", "peripheral"), "Discoverable": Variant("b", True)}
    base.update(props)
    return base


def mfr(n: int) -> Variant:
    return Variant("a{qv}", {0xFFFF: Variant("ay", bytes(n))})


@pytest.mark.parametrize("props,error", [
    (peripheral(ManufacturerData=mfr(24)), None),  # 3 (flags) + 2 + 2 + 24 = 31
    (peripheral(ManufacturerData=mfr(25)), PARSE_FAILED),
    (peripheral(ManufacturerData=mfr(21), Includes=Variant("as", ["tx-power"])), None),
    (peripheral(ManufacturerData=mfr(22), Includes=Variant("as", ["tx-power"])), PARSE_FAILED),
    (peripheral(Includes=Variant("as", ["local-name"]), LocalName=Variant("s", "x")), PARSE_FAILED),
    (peripheral(Appearance=Variant("q", 0x0341), Includes=Variant("as", ["appearance"])), PARSE_FAILED),
    ({"Type": Variant("s", "broadcast"), "Discoverable": Variant("b", True)}, PARSE_FAILED),
    (peripheral(Type=Variant("s", "beacon")), PARSE_FAILED),
    (peripheral(MinInterval=Variant("u", 200), MaxInterval=Variant("u", 100)), PARSE_FAILED),
    (peripheral(Timeout=Variant("q", 10), DiscoverableTimeout=Variant("q", 20)), PARSE_FAILED),
    (peripheral(Data=Variant("a{yv}", {0x01: Variant("ay", b"\x06")})), PARSE_FAILED),
    (peripheral(TxPower=Variant("n", 30)), PARSE_FAILED),
    (peripheral(ServiceUUIDs=Variant("as", ["180D", "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"])), None),
    (peripheral(ServiceUUIDs=Variant("as", ["not-a-uuid"])), PARSE_FAILED),
])
def test_parse_and_budget(props, error):
    async def scenario():
        async with simulator() as address:
            bus, ctl = await connect(address), await connect(address)
            GattApp(bus).advert("/adv0", props)
            if error is None:
                await register(bus, "/adv0")
                (advert,) = await on_air(ctl)
                assert advert["adv_data_len"] <= 31
            else:
                with pytest.raises(CallFailed) as err:
                    await register(bus, "/adv0")
                assert (err.value.name, err.value.text) == error
                assert await on_air(ctl) == []
            bus.disconnect()
            ctl.disconnect()
    run(scenario())


def test_bytes_on_air_and_property_updates():
    async def scenario():
        async with simulator() as address:
            bus, ctl = await connect(address), await connect(address)
            app = GattApp(bus)
            app.advert("/adv0", peripheral(ServiceUUIDs=Variant("as", ["180D"]), LocalName=Variant("s", "gattway"),
                                           ManufacturerData=Variant("a{qv}", {0x004C: Variant("ay", b"\x01\x02")})))
            await register(bus, "/adv0")
            (advert,) = await on_air(ctl)
            assert advert["adv_data"] == "020106" + "03030d18" + "05ff4c000102"
            assert advert["scan_response"] == "0809" + b"gattway".hex()
            app.set_advert_props("/adv0", {"LocalName": Variant("s", "renamed")})

            async def renamed():
                return (await on_air(ctl))[0]["local_name"] == "renamed"
            await wait_for(renamed, what="the advertisement to be re-applied")
            await call(bus, LEAM, "UnregisterAdvertisement", "o", ["/adv0"])
            assert await on_air(ctl) == []
            with pytest.raises(CallFailed) as err:
                await call(bus, LEAM, "UnregisterAdvertisement", "o", ["/adv0"])
            assert err.value.name == "org.bluez.Error.DoesNotExist"
            bus.disconnect()
            ctl.disconnect()
    run(scenario())


def test_instance_limit_and_duplicates():
    async def scenario():
        async with simulator() as address:
            bus, ctl = await connect(address), await connect(address)
            app = GattApp(bus)
            await central(ctl, "SetSupportedInstances", "y", [2])
            for i in range(3):
                app.advert(f"/adv{i}", peripheral())
            await register(bus, "/adv0")
            with pytest.raises(CallFailed) as err:
                await register(bus, "/adv0")
            assert err.value.name == "org.bluez.Error.AlreadyExists"
            await register(bus, "/adv1")
            with pytest.raises(CallFailed) as err:
                await register(bus, "/adv2")
            assert (err.value.name, err.value.text) == ("org.bluez.Error.NotPermitted",
                                                        "Maximum advertisements reached")
            (props,) = await call(ctl, bluez("/org/bluez/hci0", "org.freedesktop.DBus.Properties"), "GetAll", "s",
                                  ["org.bluez.LEAdvertisingManager1"])
            assert (props["ActiveInstances"].value, props["SupportedInstances"].value) == (2, 0)
            bus.disconnect()

            async def freed():
                return await on_air(ctl) == []
            await wait_for(freed, what="adverts of a client that left to be dropped")
            ctl.disconnect()
    run(scenario())


def test_power_off_takes_adverts_off_air_and_restart_releases_them():
    async def scenario():
        async with simulator() as address:
            bus, ctl = await connect(address), await connect(address)
            app = GattApp(bus)
            app.advert("/adv0", peripheral())
            await register(bus, "/adv0")
            await call(ctl, CONTROL, "SetPowered", "sb", ["hci0", False])
            (advert,) = await on_air(ctl)
            assert advert["on_air"] is False and app.released == []  # 5.66 keeps the instance
            await call(ctl, CONTROL, "SetPowered", "sb", ["hci0", True])
            assert (await on_air(ctl))[0]["on_air"] is True
            await call(ctl, CONTROL, "RestartBluetoothd", "d", [0.05])
            await wait_for(lambda: app.released == ["/adv0"], what="Release on bluetoothd stop")
            bus.disconnect()
            ctl.disconnect()
    run(scenario())


def test_timeout_releases_the_advertisement():
    async def scenario():
        async with simulator() as address:
            bus, ctl = await connect(address), await connect(address)
            app = GattApp(bus)
            app.advert("/adv0", peripheral(Timeout=Variant("q", 1), Includes=Variant("as", ["tx-power"])))
            await register(bus, "/adv0")
            (advert,) = await on_air(ctl)
            assert advert["adv_data"].endswith("020a00")  # the TX power AD the kernel appends
            await wait_for(lambda: app.released == ["/adv0"], what="Release after Timeout")
            assert await on_air(ctl) == []
            bus.disconnect()
            ctl.disconnect()
    run(scenario())
