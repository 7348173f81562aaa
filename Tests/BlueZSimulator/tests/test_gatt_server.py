"""GattManager1 (gatt-database.c): registration, its errors, flag validation, handles, unregistration."""
from __future__ import annotations

import asyncio
import json

import pytest

from gatt_app import GattApp
from sim_process import CallFailed, bluez, call, central, connect, register_app, simulator, v, wait_for

HR = "0000180d-0000-1000-8000-00805f9b34fb"
GM = "org.bluez.GattManager1"


async def registered_apps(bus) -> list[dict]:
    (text,) = await central(bus, "GetApplications")
    return json.loads(text)


def heart_rate_app(bus, root: str = "/app") -> GattApp:
    app = GattApp(bus, root)
    svc = app.service("service0", "180D")
    chrc = app.char(svc, "char0", "2A37", ["read", "notify"], value=b"\x00\x48")
    app.desc(chrc, "desc0", "2901", ["read"], b"Heart rate")
    app.char(svc, "char1", "2A39", ["write"])
    return app


def run(coro):
    asyncio.run(asyncio.wait_for(coro, 60))


def test_register_writes_back_handles_and_unregister():
    async def scenario():
        async with simulator() as address:
            bus, ctl = await connect(address), await connect(address)
            app = heart_rate_app(bus)
            await register_app(bus, "/app")
            # The Set calls for Handle=0 objects arrive before the reply, as bluetoothd sends them first.
            handles = dict(app.handle_writes)
            assert set(handles) == {"/app/service0", "/app/service0/char0", "/app/service0/char1"}
            # bluetoothd's own GAP (0x0001-0x0007), GATT (0x0008-0x0011) and Device Information
            # (0x0012-0x0014) services come first (register_core_services()).
            assert handles["/app/service0"] == 0x0015
            # service decl, char0 decl+value, CCC, user descriptor, char1 decl+value
            assert handles["/app/service0/char0"] == handles["/app/service0"] + 2
            assert handles["/app/service0/char1"] == handles["/app/service0"] + 6
            apps = await registered_apps(ctl)
            assert apps[0]["services"][0]["uuid"] == HR
            assert apps[0]["services"][0]["characteristics"][0]["ccc_handle"] == handles["/app/service0/char0"] + 1
            await call(bus, bluez("/org/bluez/hci0", GM), "UnregisterApplication", "o", ["/app"])
            assert await registered_apps(ctl) == []
            with pytest.raises(CallFailed) as err:
                await call(bus, bluez("/org/bluez/hci0", GM), "UnregisterApplication", "o", ["/app"])
            assert err.value.name == "org.bluez.Error.DoesNotExist"
            bus.disconnect()
            ctl.disconnect()
    run(scenario())


def test_registration_errors():
    async def scenario():
        async with simulator() as address:
            bus = await connect(address)
            heart_rate_app(bus)
            await register_app(bus, "/app")
            with pytest.raises(CallFailed) as err:
                await register_app(bus, "/app")
            assert err.value.name == "org.bluez.Error.AlreadyExists"
            with pytest.raises(CallFailed) as err:  # wrong signature
                await call(bus, bluez("/org/bluez/hci0", GM), "RegisterApplication", "o", ["/other"])
            assert err.value.name == "org.bluez.Error.InvalidArguments"
            other = await connect(address)
            GattApp(other, "/empty")
            with pytest.raises(CallFailed) as err:
                await register_app(other, "/empty")
            assert (err.value.name, err.value.text) == ("org.bluez.Error.Failed", "No object received")
            broken = await connect(address)
            GattApp(broken, "/broken").managed_objects_error = "no ObjectManager here"
            with pytest.raises(CallFailed) as err:
                await register_app(broken, "/broken")
            assert err.value.text == "No object received"
            for b in (bus, other, broken):
                b.disconnect()
    run(scenario())


@pytest.mark.parametrize("flags,ok", [
    (["read", "encrypt-read", "secure-write", "authorize", "reliable-write", "writable-auxiliaries"], True),
    (["read", "bogus"], False),
    ([], False),
])
def test_characteristic_flags_are_validated(flags, ok):
    async def scenario():
        async with simulator() as address:
            bus = await connect(address)
            app = GattApp(bus)
            svc = app.service("s", "180F")
            app.char(svc, "c", "2A19", flags, value=b"\x64")
            if ok:
                await register_app(bus, "/app")
            else:
                with pytest.raises(CallFailed) as err:
                    await register_app(bus, "/app")
                assert (err.value.name, err.value.text) == ("org.bluez.Error.Failed", "No valid service object found")
            bus.disconnect()
    run(scenario())


def test_database_errors_and_given_handles():
    async def scenario():
        async with simulator() as address:
            bus = await connect(address)
            gap = GattApp(bus, "/gap")
            gap.char(gap.service("s", "1800"), "c", "2A00", ["read"])
            with pytest.raises(CallFailed) as err:
                await register_app(bus, "/gap")
            assert err.value.text == "Failed to create entry in database"
            orphan = GattApp(bus, "/orphan")
            orphan.char("/orphan/nowhere", "c", "2A00", ["read"])
            orphan.service("s", "180F")
            with pytest.raises(CallFailed) as err:
                await register_app(bus, "/orphan")
            assert err.value.text == "No valid service object found"
            fixed = GattApp(bus, "/fixed")
            svc = fixed.service("s", "180F", handle=0x0100)
            fixed.char(svc, "c", "2A19", ["read"], handle=0x0102)
            await register_app(bus, "/fixed")
            assert fixed.handle_writes == []  # non-zero handles are kept, nothing written back
            inc = GattApp(bus, "/inc")
            battery = inc.service("s0", "180F")
            inc.char(battery, "c", "2A19", ["read"])
            main = inc.service("s1", "1812")
            inc.services[main]["Includes"] = v("ao", [battery])
            inc.char(main, "c", "2A4D", ["read", "notify"])
            await register_app(bus, "/inc")
            handles = dict(inc.handle_writes)
            # the include declaration sits right after the service declaration
            assert handles["/inc/s1/c"] == handles["/inc/s1"] + 3
            apps = {a["path"]: a for a in await registered_apps(bus)}
            assert apps["/inc"]["services"][1]["includes"] == [battery]
            clash = GattApp(bus, "/clash")
            clash.char(clash.service("s", "180A", handle=0x0101), "c", "2A29", ["read"])
            with pytest.raises(CallFailed) as err:
                await register_app(bus, "/clash")
            assert err.value.text == "Failed to create entry in database"
            bus.disconnect()
    run(scenario())


def test_app_leaving_the_bus_or_removing_a_service():
    async def scenario():
        async with simulator() as address:
            ctl = await connect(address)
            bus = await connect(address)
            app = heart_rate_app(bus)
            await register_app(bus, "/app")
            assert len(await registered_apps(ctl)) == 1
            app.remove_service("/app/service0")
            await wait_for(lambda: registered_apps_services(ctl), what="service removal")
            bus.disconnect()

            async def gone():
                return await registered_apps(ctl) == []
            await wait_for(gone, what="unregistration when the app leaves the bus")
            ctl.disconnect()
    run(scenario())


async def registered_apps_services(ctl) -> bool:
    apps = await registered_apps(ctl)
    return len(apps) == 1 and apps[0]["services"] == []
