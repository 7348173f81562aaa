"""bleak on hci1 reads, writes and receives notifications from the built gattway binary's peripheral on hci0,
through the simulated air, with values coming from and going to a real mosquitto broker.

Fails (never skips) when the gattway binary, mosquitto or the mosquitto clients are missing.
"""
from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

from sim_process import bluez, call, central, connect, counters, simulator, wait_for

SERVICE = "6e400001-b5a3-f393-e0a9-e50e24dcca9e"
RX = "6e400002-b5a3-f393-e0a9-e50e24dcca9e"
TX = "6e400003-b5a3-f393-e0a9-e50e24dcca9e"
ROOT = Path(__file__).resolve().parents[3]


def gattway_binary() -> str:
    override = os.environ.get("GATTWAY_BINARY")
    candidates = [override] if override else [str(ROOT / ".build" / c / "gattway") for c in ("debug", "release")]
    for path in candidates:
        if path and os.access(path, os.X_OK):
            return path
    raise AssertionError(f"the gattway binary is missing ({candidates}); run `swift build` first")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_broker(directory: str) -> tuple[subprocess.Popen, int]:
    for tool in ("mosquitto", "mosquitto_pub", "mosquitto_sub"):
        if shutil.which(tool) is None and not os.path.exists(f"/usr/sbin/{tool}"):
            raise AssertionError(f"{tool} is not installed")
    port = free_port()
    conf = Path(directory) / "mosquitto.conf"
    conf.write_text(f"listener {port} 127.0.0.1\nallow_anonymous true\nmax_queued_messages 0\npersistence false\n")
    exe = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
    proc = subprocess.Popen([exe, "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return proc, port
        import time
        time.sleep(0.05)
    proc.kill()
    raise AssertionError("mosquitto did not start")


def publish(port: int, topic: str, payload: str, retain: bool = False) -> None:
    args = ["mosquitto_pub", "-h", "127.0.0.1", "-p", str(port), "-t", topic, "-m", payload, "-q", "1"]
    subprocess.run(args + (["-r"] if retain else []), check=True, timeout=10)


async def _acquired(bus) -> bool:
    return (await counters(bus)).get("server.notify_acquired", 0) >= 1


def test_bleak_talks_to_the_gattway_peripheral():
    binary = gattway_binary()
    directory = tempfile.mkdtemp(prefix="gattway-bleak-")
    broker, port = start_broker(directory)
    config = Path(directory) / "config.yaml"
    config.write_text(f"""
mqtt: {{ url: "mqtt://127.0.0.1:{port}", base_topic: gattway, client_id: gattway-bleak }}
state_dir: "{directory}/state"
bluetooth: {{ adapter: hci0 }}
peripheral:
  adapter: hci0
  advertise: {{ local_name: gattway-periph, service_uuids: ["{SERVICE}"] }}
  services:
    - uuid: "{SERVICE}"
      characteristics:
        - {{ uuid: "{TX}", name: tx, flags: [read, notify], source_topic: test/tx, codec: utf8 }}
        - {{ uuid: "{RX}", name: rx, flags: [write], sink_topic: test/rx, codec: utf8 }}
""")
    publish(port, "test/tx", "ready", retain=True)

    async def scenario():
        async with simulator() as address:
            os.environ["DBUS_SYSTEM_BUS_ADDRESS"] = address
            from bleak import BleakClient, BleakScanner

            gattway = subprocess.Popen([binary, "run", "--config", str(config)], stderr=subprocess.PIPE,
                                       env={**os.environ, "DBUS_SYSTEM_BUS_ADDRESS": address})
            try:
                bus = await connect(address)

                async def registered() -> bool:
                    (apps,) = await central(bus, "GetApplications")
                    return TX in apps

                for _ in range(300):
                    if await registered():
                        break
                    await asyncio.sleep(0.1)
                assert await registered(), "gattway did not register its GATT application"
                (props,) = await call(bus, bluez("/org/bluez/hci0", "org.freedesktop.DBus.Properties"), "Get", "ss",
                                      ["org.bluez.Adapter1", "Address"])
                device = await BleakScanner.find_device_by_address(props.value, timeout=15, bluez={"adapter": "hci1"})
                assert device is not None, "hci1 did not see gattway's advertisement"
                sub = subprocess.Popen(["mosquitto_sub", "-h", "127.0.0.1", "-p", str(port), "-t", "test/rx", "-C", "1",
                                        "-W", "30"], stdout=subprocess.PIPE, text=True)
                received: list[bytes] = []
                got = asyncio.Event()

                def on_value(_char, data: bytearray) -> None:
                    received.append(bytes(data))
                    if len(received) >= 3:
                        got.set()

                async with BleakClient(device, bluez={"adapter": "hci1"}, timeout=20) as client:
                    assert await client.read_gatt_char(TX) == b"ready"
                    await client.write_gatt_char(RX, b"hello", response=True)
                    out, _ = await asyncio.to_thread(sub.communicate, timeout=30)
                    assert out.strip() == "hello"
                    await client.start_notify(TX, on_value)
                    # bluetoothd takes gattway's AcquireNotify socket in the background after the CCC write.
                    await wait_for(lambda: _acquired(bus), 30, "gattway's AcquireNotify socket")
                    for value in ("one", "two", "three"):
                        await asyncio.to_thread(publish, port, "test/tx", value)
                    try:
                        await asyncio.wait_for(got.wait(), 30)
                    except asyncio.TimeoutError:
                        raise AssertionError(f"three notifications did not arrive (got {received})") from None
                    assert received == [b"one", b"two", b"three"]
                    await client.stop_notify(TX)
                bus.disconnect()
            finally:
                gattway.terminate()
                try:
                    gattway.wait(10)
                except subprocess.TimeoutExpired:
                    gattway.kill()
    try:
        asyncio.run(asyncio.wait_for(scenario(), 120))
    finally:
        broker.terminate()
        broker.wait(10)
