"""Measures how many notifications per second the simulator sustains, so it never limits Gattway's
benchmarks: once as PropertiesChanged(Value) signals (StartNotify) and once through an AcquireNotify
socket. Usage: .venv/bin/python bench_sim.py [--count N] [--rate HZ]

Each run starts its own simulator (firehose scenario), connects F1:0E:00:00:00:00, asks the control
interface for a burst of `count` seq+timestamp notifications at `rate`, and counts what arrives, in
order, on a dbus-fast client (signals) or a plain socket reader (acquired fd).
"""
from __future__ import annotations

import argparse
import asyncio
import os
import socket
import struct
import subprocess
import sys
import time

from dbus_fast import Message, MessageType
from dbus_fast.aio import MessageBus

HERE = os.path.dirname(os.path.abspath(__file__))
ADDR = "F1:0E:00:00:00:00"
DEV = "/org/bluez/hci0/dev_F1_0E_00_00_00_00"
CHAR_UUID = "0000ff01-0000-1000-8000-00805f9b34fb"
GC = "org.bluez.GattCharacteristic1"
TIMEOUT = 120.0


async def call(bus, dest, path, iface, member, sig="", body=None):
    reply = await asyncio.wait_for(bus.call(Message(destination=dest, path=path, interface=iface, member=member,
                                                    signature=sig, body=body or [])), 30)
    if reply.message_type is MessageType.ERROR:
        raise RuntimeError(f"{member}: {reply.error_name}: {reply.body}")
    return reply


async def control(bus, member, sig="", body=None):
    return await call(bus, "org.gattway.Simulator1", "/org/gattway/simulator", "org.gattway.Simulator1",
                      member, sig, body)


async def connected_char(bus) -> str:
    await call(bus, "org.bluez", "/org/bluez/hci0", "org.bluez.Adapter1", "StartDiscovery")
    deadline = time.monotonic() + 30
    while True:  # the device object appears with the first advert
        reply = await call(bus, "org.bluez", "/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
        objs = reply.body[0]
        if DEV in objs:
            break
        if time.monotonic() > deadline:
            raise RuntimeError("firehose device never discovered")
        await asyncio.sleep(0.05)
    await call(bus, "org.bluez", "/org/bluez/hci0", "org.bluez.Adapter1", "StopDiscovery")
    await call(bus, "org.bluez", DEV, "org.bluez.Device1", "Connect")
    while True:
        reply = await call(bus, "org.bluez", "/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
        objs = reply.body[0]
        chars = [p for p, i in objs.items() if GC in i and i[GC]["UUID"].value == CHAR_UUID and p.startswith(DEV)]
        if chars and objs[DEV]["org.bluez.Device1"]["ServicesResolved"].value:
            return chars[0]
        if time.monotonic() > deadline:
            raise RuntimeError("firehose services never resolved")
        await asyncio.sleep(0.05)


def report(label: str, received: list[int], first: float, last: float, count: int, dropped: int) -> None:
    in_order = all(b == a + 1 for a, b in zip(received, received[1:]))
    span = max(last - first, 1e-9)
    rate = (len(received) - 1) / span if len(received) > 1 else 0.0
    print(f"{label:<22} received {len(received):>7}/{count}  dropped {dropped:>6}  "
          f"in order {'yes' if in_order else 'NO'}  sustained {rate:>10,.0f} notifications/s")


async def bench_signals(address: str, count: int, rate: float) -> None:
    bus = await MessageBus(bus_address=address).connect()
    path = await connected_char(bus)
    received: list[int] = []
    stamps = [0.0, 0.0]
    done = asyncio.Event()

    def on_message(msg: Message):
        if msg.message_type is MessageType.SIGNAL and msg.path == path and msg.member == "PropertiesChanged":
            value = msg.body[1].get("Value")
            if value is not None:
                now = time.monotonic()
                if not received:
                    stamps[0] = now
                stamps[1] = now
                received.append(struct.unpack_from("<I", value.value)[0])
                if len(received) >= count:
                    done.set()
        return False

    bus.add_message_handler(on_message)
    await call(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "AddMatch", "s",
               [f"type='signal',sender='org.bluez',path='{path}'"])
    await call(bus, "org.bluez", path, GC, "StartNotify")
    await control(bus, "StartNotifying", "ssdus", [ADDR, CHAR_UUID, rate, count, "seq-timestamp"])
    try:
        await asyncio.wait_for(done.wait(), TIMEOUT)
    except asyncio.TimeoutError:
        pass
    counters = {k: v.value for k, v in (await control(bus, "GetCounters")).body[0].items()}
    report("PropertiesChanged", received, stamps[0], stamps[1], count, 0)
    print(f"{'':<22} simulator counters: notifications_sent={counters.get('notifications_sent', 0)}")
    bus.disconnect()


async def bench_socket(address: str, count: int, rate: float) -> None:
    bus = await MessageBus(bus_address=address, negotiate_unix_fd=True).connect()
    path = await connected_char(bus)
    reply = await call(bus, "org.bluez", path, GC, "AcquireNotify", "a{sv}", [{}])
    sock = socket.socket(fileno=reply.unix_fds[reply.body[0]])
    sock.setblocking(False)
    loop = asyncio.get_running_loop()
    received: list[int] = []
    stamps = [0.0, 0.0]
    done = asyncio.Event()

    def readable() -> None:
        while True:
            try:
                data = sock.recv(64)
            except BlockingIOError:
                return
            if not data:
                done.set()
                return
            now = time.monotonic()
            if not received:
                stamps[0] = now
            stamps[1] = now
            received.append(struct.unpack_from("<I", data)[0])
            if len(received) >= count:
                done.set()
                return

    loop.add_reader(sock.fileno(), readable)
    await control(bus, "StartNotifying", "ssdus", [ADDR, CHAR_UUID, rate, count, "seq-timestamp"])
    deadline = time.monotonic() + TIMEOUT
    while not done.is_set() and time.monotonic() < deadline:
        counters = {k: v.value for k, v in (await control(bus, "GetCounters")).body[0].items()}
        if counters.get("notifications_sent", 0) + counters.get("notify_dropped_eagain", 0) >= count:
            await asyncio.sleep(0.2)  # let the reader drain what is still queued in the socket
            break
        await asyncio.sleep(0.1)
    loop.remove_reader(sock.fileno())
    counters = {k: v.value for k, v in (await control(bus, "GetCounters")).body[0].items()}
    report("AcquireNotify socket", received, stamps[0], stamps[1], count, counters.get("notify_dropped_eagain", 0))
    sock.close()
    bus.disconnect()


class Simulator:
    def __enter__(self) -> str:
        self.proc = subprocess.Popen([sys.executable, "-m", "bluezsim", "--scenario",
                                      os.path.join(HERE, "scenarios", "firehose.yaml")],
                                     cwd=HERE, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().strip()
        if not line.startswith("DBUS_SYSTEM_BUS_ADDRESS="):
            self.proc.kill()
            raise SystemExit(f"bench_sim: simulator did not start (got {line!r})")
        return line.split("=", 1)[1]

    def __exit__(self, *exc) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--count", type=int, default=50000)
    p.add_argument("--rate", type=float, default=100000.0,
                   help="requested rate for the PropertiesChanged run (default: flat out)")
    p.add_argument("--socket-rate", type=float, default=25000.0,
                   help="requested rate for the socket run; above what the reader drains, drops are expected")
    args = p.parse_args()
    print(f"bench_sim: {args.count} notifications per run; requested {args.rate:,.0f}/s as signals, "
          f"{args.socket_rate:,.0f}/s through the socket")
    with Simulator() as address:
        asyncio.run(bench_signals(address, args.count, args.rate))
    with Simulator() as address:
        asyncio.run(bench_socket(address, args.count, args.socket_rate))


if __name__ == "__main__":
    main()
