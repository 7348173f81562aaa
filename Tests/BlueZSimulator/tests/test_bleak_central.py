"""bleak 3.1.0, a real BlueZ client, against the simulator: scanning, connecting, GATT operations.

bleak talks to the system bus named by DBUS_SYSTEM_BUS_ADDRESS and checks `bluetoothctl --version`
(5.55 or newer), so each scenario runs as a child process with that variable set, reporting JSON.
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from conftest import HERE

CHILD_TIMEOUT = 60

COMMON = textwrap.dedent('''
    import asyncio, json, sys
    from bleak import BleakClient, BleakScanner
    from dbus_fast import BusType, Message
    from dbus_fast.aio import MessageBus

    ADDR = "44:00:00:00:00:01"
    SPEC = {
        "address": ADDR, "interval_ms": 50, "rssi": -60, "mtu": 247,
        "advert": {"flags": 6, "name": "bleak-target", "manufacturer_data": {"0x0a0b": "01"}},
        "gatt": [{"uuid": "cc00", "characteristics": [
            {"uuid": "cc01", "flags": ["read"], "value": "hello"},
            {"uuid": "cc02", "flags": ["write"], "behaviour": {"kind": "echo"}},
            {"uuid": "cc03", "flags": ["write-without-response"]},
            {"uuid": "cc04", "flags": ["notify"]},
        ]}],
    }

    # Two adapters exist and bleak picks its default from a set (random order): name hci0 explicitly.
    HCI0 = {"adapter": "hci0"}

    def u(short):
        return f"0000{short}-0000-1000-8000-00805f9b34fb"

    async def control(bus, member, sig, body):
        reply = await bus.call(Message(destination="org.gattway.Simulator1", path="/org/gattway/simulator",
                                       interface="org.gattway.Simulator1", member=member, signature=sig, body=body))
        if reply.error_name:
            raise RuntimeError(f"{member}: {reply.error_name} {reply.body}")
        return reply.body
''')

SCAN = COMMON + textwrap.dedent('''
    async def main():
        bus = await MessageBus(bus_type=BusType.SYSTEM).connect()
        await control(bus, "AddPeripheral", "s", [json.dumps(SPEC)])
        seen = []
        first = asyncio.Event()
        changed = asyncio.Event()

        def on_adv(device, adv):
            if device.address == ADDR:
                seen.append({"rssi": adv.rssi, "mfr": {str(k): v.hex() for k, v in adv.manufacturer_data.items()},
                             "name": adv.local_name})
                first.set()
                if adv.rssi == -90 and "2571" in seen[-1]["mfr"] and seen[-1]["mfr"]["2571"] == "02":
                    changed.set()

        async with BleakScanner(on_adv, bluez=HCI0):
            await asyncio.wait_for(first.wait(), 30)
            await control(bus, "SetRSSI", "sn", [ADDR, -90])
            await control(bus, "UpdateAdvert", "ss", [ADDR, json.dumps({"manufacturer_data": {"0x0a0b": "02"}})])
            await asyncio.wait_for(changed.wait(), 30)
        print(json.dumps({"first": seen[0], "last": seen[-1]}))

    asyncio.run(main())
''')

GATT = COMMON + textwrap.dedent('''
    async def main():
        bus = await MessageBus(bus_type=BusType.SYSTEM).connect()
        await control(bus, "AddPeripheral", "s", [json.dumps(SPEC)])
        device = await BleakScanner.find_device_by_address(ADDR, timeout=20, bluez=HCI0)
        out = {}
        got = []
        done = asyncio.Event()
        async with BleakClient(device, bluez=HCI0) as client:
            out["services"] = sorted(s.uuid for s in client.services)
            out["read"] = (await client.read_gatt_char(u("cc01"))).decode()
            await client.write_gatt_char(u("cc02"), b"with-response", response=True)
            await client.write_gatt_char(u("cc03"), b"no-response", response=False)

            def on_notify(_char, data):
                got.append(int.from_bytes(data[:4], "little"))
                if len(got) == 50:
                    done.set()
            await client.start_notify(u("cc04"), on_notify)
            await control(bus, "StartNotifying", "ssdus", [ADDR, "cc04", 200.0, 50, "counter"])
            await asyncio.wait_for(done.wait(), 30)
            await client.stop_notify(u("cc04"))
        out["notified"] = got
        (writes,) = await control(bus, "GetWrites", "ss", [ADDR, "cc02"])
        out["writes_cc02"] = [[bytes(w[0]).decode(), w[2]] for w in writes]
        (writes,) = await control(bus, "GetWrites", "ss", [ADDR, "cc03"])
        out["writes_cc03"] = [[bytes(w[0]).decode(), w[2]] for w in writes]
        async with BleakClient(device, bluez=HCI0) as client:  # reconnect, cached services
            out["reread"] = (await client.read_gatt_char(u("cc01"))).decode()
        print(json.dumps(out))

    asyncio.run(main())
''')


def run_child(sim, script: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", script], cwd=str(HERE), env=sim.env, capture_output=True,
                          text=True, timeout=CHILD_TIMEOUT)
    assert proc.returncode == 0, f"bleak child failed:\n{proc.stdout}\n{proc.stderr}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_bleak_scanner_sees_rssi_and_manufacturer_data_change(sim_env):
    sim = sim_env("demo")
    out = run_child(sim, SCAN)
    assert out["first"]["rssi"] == -60 and out["first"]["mfr"] == {"2571": "01"}
    assert out["first"]["name"] == "bleak-target"
    assert out["last"]["rssi"] == -90 and out["last"]["mfr"] == {"2571": "02"}


def test_bleak_connect_read_write_notify_reconnect(sim_env):
    sim = sim_env("demo")
    out = run_child(sim, GATT)
    assert "0000cc00-0000-1000-8000-00805f9b34fb" in out["services"]
    assert out["read"] == "hello" and out["reread"] == "hello"
    assert out["writes_cc02"] == [["with-response", "request"]]
    assert out["writes_cc03"] == [["no-response", "command"]]
    assert out["notified"] == list(range(50))
