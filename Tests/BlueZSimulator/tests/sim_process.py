"""Starts `bluez-sim` for the server-side tests and connects app/test buses to its private bus."""
from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from dbus_fast import Message, MessageType, Variant
from dbus_fast.aio import MessageBus

HERE = Path(__file__).resolve().parent.parent
START_TIMEOUT = 30.0
CALL_TIMEOUT = 10.0
CENTRAL = ("org.gattway.Simulator1", "/org/gattway/simulator/central", "org.gattway.Simulator1.Central")
CONTROL = ("org.gattway.Simulator1", "/org/gattway/simulator", "org.gattway.Simulator1")


def require_tools() -> None:
    """The suite fails (never skips) without the real tools it stands on."""
    for tool in ("dbus-daemon", "bluetoothctl"):
        if shutil.which(tool) is None:
            raise AssertionError(f"{tool} is not installed: the simulator tests need it (apt-get install dbus bluez)")


@contextlib.asynccontextmanager
async def simulator(*args: str):
    """Runs the simulator with its own private dbus-daemon and yields the bus address."""
    require_tools()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bluezsim", *args, cwd=str(HERE),
        stdout=subprocess.PIPE, stderr=None, env={**os.environ, "PYTHONPATH": str(HERE)})
    try:
        line = await asyncio.wait_for(proc.stdout.readline(), START_TIMEOUT)
        text = line.decode().strip()
        if not text.startswith("DBUS_SYSTEM_BUS_ADDRESS="):
            raise AssertionError(f"bluez-sim did not announce its bus (got {text!r}, exit {proc.returncode})")
        yield text.split("=", 1)[1]
    finally:
        if proc.returncode is None:
            proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), 10)
            except asyncio.TimeoutError:
                proc.kill()
                await proc.wait()


async def connect(address: str) -> MessageBus:
    return await MessageBus(bus_address=address, negotiate_unix_fd=True).connect()


class CallFailed(Exception):
    def __init__(self, name: str, text: str) -> None:
        super().__init__(f"{name}: {text}")
        self.name = name
        self.text = text


async def call(bus: MessageBus, target: tuple[str, str, str], member: str, signature: str = "",
               body: list | None = None) -> list:
    dest, path, iface = target
    reply = await asyncio.wait_for(bus.call(Message(destination=dest, path=path, interface=iface, member=member,
                                                    signature=signature, body=body or [])), CALL_TIMEOUT)
    if reply.message_type is MessageType.ERROR:
        raise CallFailed(reply.error_name, reply.body[0] if reply.body else "")
    return reply.body


def bluez(path: str, iface: str) -> tuple[str, str, str]:
    return ("org.bluez", path, iface)


async def central(bus: MessageBus, member: str, signature: str = "", body: list | None = None) -> list:
    return await call(bus, CENTRAL, member, signature, body)


async def register_app(bus: MessageBus, path: str, adapter: str = "hci0") -> None:
    await call(bus, bluez(f"/org/bluez/{adapter}", "org.bluez.GattManager1"), "RegisterApplication",
               "oa{sv}", [path, {}])


async def wait_for(predicate, timeout: float = 10.0, what: str = "condition") -> None:
    """Polls an external process's state (counters etc.) with an overall timeout."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        result = predicate()
        if asyncio.iscoroutine(result):
            result = await result
        if result:
            return
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


async def counters(bus: MessageBus) -> dict[str, int]:
    (values,) = await call(bus, CONTROL, "GetCounters")
    return {k: v.value for k, v in values.items()}


async def counter_reaches(bus: MessageBus, name: str, target: int) -> None:
    """Waits until the simulator's counter `name` reaches `target`. A call is counted as it arrives and its
    handler has started by the time the counter can be read, so this awaits an operation being in flight."""
    async def reached() -> bool:
        return (await counters(bus)).get(name, 0) >= target
    await wait_for(reached, 30, f"counter {name} to reach {target}")


async def reports_heard(bus: MessageBus, address: str, count: int = 3) -> None:
    """Waits until the simulated radio has delivered `count` more advertising reports of `address`. Reports are
    handled whole before the counter can be read, so what they changed (or not) is in place afterwards."""
    key = f"adv_reports.{address}"
    start = (await counters(bus)).get(key, 0)

    async def heard() -> bool:
        return (await counters(bus)).get(key, 0) >= start + count
    await wait_for(heard, 30, f"{count} more reports of {address}")


def v(sig: str, value) -> Variant:
    return Variant(sig, value)
