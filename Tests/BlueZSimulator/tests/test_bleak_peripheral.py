"""bleak on hci1 talks to a dbus-fast GATT app registered on hci0, through the simulated air."""
from __future__ import annotations

import asyncio
import os

from dbus_fast import Variant

from gatt_app import GattApp
from sim_process import bluez, call, connect, register_app, simulator, wait_for

SERVICE = "6e400001-b5a3-f393-e0a9-e50e24dcca9e"
RX = "6e400002-b5a3-f393-e0a9-e50e24dcca9e"
TX = "6e400003-b5a3-f393-e0a9-e50e24dcca9e"
LONG = "00002a24-0000-1000-8000-00805f9b34fb"
ALARM = "00002a06-0000-1000-8000-00805f9b34fb"


def test_bleak_reads_writes_and_receives_notifications():
    async def scenario():
        async with simulator() as address:
            os.environ["DBUS_SYSTEM_BUS_ADDRESS"] = address
            from bleak import BleakClient, BleakScanner

            bus = await connect(address)
            app = GattApp(bus)
            svc = app.service("s", SERVICE)
            rx = app.char(svc, "rx", RX, ["write", "write-without-response"])
            tx = app.char(svc, "tx", TX, ["read", "notify"], value=b"ready")
            app.char(svc, "long", LONG, ["read"], value=bytes(range(200)))
            alarm = app.char(svc, "alarm", ALARM, ["read", "indicate"])
            app.desc(alarm, "label", "2901", ["read"], b"alarm state")
            await register_app(bus, "/app")
            app.advert("/adv", {"Type": Variant("s", "peripheral"), "ServiceUUIDs": Variant("as", [SERVICE]),
                                "LocalName": Variant("s", "gattway-app")})
            await call(bus, bluez("/org/bluez/hci0", "org.bluez.LEAdvertisingManager1"), "RegisterAdvertisement",
                       "oa{sv}", ["/adv", {}])
            (props,) = await call(bus, bluez("/org/bluez/hci0", "org.freedesktop.DBus.Properties"), "Get", "ss",
                                  ["org.bluez.Adapter1", "Address"])
            hci0_address = props.value

            device = await BleakScanner.find_device_by_address(hci0_address, timeout=15, bluez={"adapter": "hci1"})
            assert device is not None, "hci1 did not see the advertisement of hci0"
            assert device.name == "gattway-app"
            received: list[bytes] = []
            got = asyncio.Event()

            def on_value(_char, data: bytearray) -> None:
                received.append(bytes(data))
                if len(received) == 3:
                    got.set()

            async with BleakClient(device, bluez={"adapter": "hci1"}, timeout=20) as client:
                assert await client.read_gatt_char(TX) == b"ready"
                assert await client.read_gatt_char(LONG) == bytes(range(200))
                await client.write_gatt_char(RX, b"hello", response=True)
                # With write-without-response in its flags bluetoothd acknowledges before the app has it.
                await wait_for(lambda: rx.writes, what="the write at the app")
                assert rx.writes[-1][0] == b"hello"
                assert rx.writes[-1][1]["device"].startswith("/org/bluez/hci0/dev_")
                await client.start_notify(TX, on_value)
                await wait_for(lambda: tx.start_notify_calls == 1, what="StartNotify on the app")
                for value in (b"1", b"2", b"3"):
                    tx.notify(value)
                await asyncio.wait_for(got.wait(), 10)
                assert received == [b"1", b"2", b"3"]
                await client.stop_notify(TX)
                await wait_for(lambda: tx.stop_notify_calls == 1, what="StopNotify on the app")
                # An indication crosses the air too, and the app hears the confirmation.
                indicated = asyncio.Event()
                await client.start_notify(ALARM, lambda _c, data: indicated.set() if data == b"\x01" else None)
                await wait_for(lambda: alarm.start_notify_calls == 1, what="StartNotify for the indication")
                alarm.notify(b"\x01")
                await asyncio.wait_for(indicated.wait(), 10)
                await wait_for(lambda: alarm.confirms == 1, what="Confirm at the app")
                label = next(d for d in client.services.get_characteristic(ALARM).descriptors
                             if d.uuid.startswith("00002901"))
                assert await client.read_gatt_descriptor(label.handle) == b"alarm state"
            bus.disconnect()
    asyncio.run(asyncio.wait_for(scenario(), 120))
