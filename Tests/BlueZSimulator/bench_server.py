"""Prints how many notifications/s the simulator's GATT server side carries from an app to the
remote central, through an AcquireNotify socket and through PropertiesChanged(Value) signals.

Run: Tests/BlueZSimulator/.venv/bin/python Tests/BlueZSimulator/bench_server.py [seconds]
The app here is a dbus-fast peripheral app in this process, so the figures include its own cost;
Gattway's peripheral benchmarks need the simulator to stay well above what the app produces.
"""
from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE / "tests")]

from dbus_fast import Message, Variant  # noqa: E402

from bluezsim import dbus_send_fix  # noqa: E402
from gatt_app import CHRC, PROPS, GattApp  # noqa: E402
from sim_process import central, connect, counters, register_app, simulator, v, wait_for  # noqa: E402

PHONE = "C0:FF:EE:00:00:01"
PAYLOAD = bytes(20)


async def received(ctl) -> int:
    return (await counters(ctl)).get("central.notifications_received", 0)


async def settle(ctl, expected: int) -> int:
    """Waits (bounded) until the central has everything that was sent, or stops growing."""
    last, stable = -1, 0
    for _ in range(200):
        now = await received(ctl)
        if now >= expected:
            return now
        stable = stable + 1 if now == last else 0
        if stable >= 10:
            return now
        last = now
        await asyncio.sleep(0.05)
    return last


async def main(seconds: float) -> None:
    dbus_send_fix.install()  # the app floods its own connection too
    async with simulator() as address:
        bus, ctl = await connect(address), await connect(address)
        app = GattApp(bus)
        svc = app.service("s", "180D")
        fd_char = app.char(svc, "fd", "2A38", ["notify"], notify_acquired=True)
        sig_char = app.char(svc, "sig", "2A37", ["notify"])
        await register_app(bus, "/app")
        await central(ctl, "Connect", "sa{sv}", [PHONE, {"mtu": v("q", 247)}])
        await central(ctl, "WriteCCC", "ssq", [PHONE, "2a38", 1])
        await central(ctl, "WriteCCC", "ssq", [PHONE, "2a37", 1])
        await wait_for(lambda: fd_char.notify_sock is not None, what="AcquireNotify")

        base = await received(ctl)
        sent, start = 0, time.monotonic()
        while time.monotonic() - start < seconds:
            for _ in range(256):
                if fd_char.send_fd(PAYLOAD):
                    sent += 1
            await asyncio.sleep(0)
        elapsed = time.monotonic() - start
        got = await settle(ctl, base + sent) - base
        print(f"AcquireNotify socket: {got / elapsed:,.0f} notifications/s delivered "
              f"({sent} sent, {got} received, app met EAGAIN {fd_char.eagain} times)")

        base = await received(ctl)
        sent, start = 0, time.monotonic()
        body = [CHRC, {"Value": Variant("ay", PAYLOAD)}, []]
        while time.monotonic() - start < seconds:
            for _ in range(128):
                last = bus.send(Message.new_signal(sig_char.path, PROPS, "PropertiesChanged", "sa{sv}as", body))
                sent += 1
            await last  # the app's own write queue is the limit here, keep it bounded
        elapsed = time.monotonic() - start
        got = await settle(ctl, base + sent) - base
        print(f"PropertiesChanged(Value): {got / elapsed:,.0f} notifications/s delivered ({sent} sent, {got} received)")
        bus.disconnect()
        ctl.disconnect()


if __name__ == "__main__":
    asyncio.run(main(float(sys.argv[1]) if len(sys.argv) > 1 else 3.0))
