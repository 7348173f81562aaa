"""Shared test plumbing for the central-side conformance suite.

`sim_env` starts bluez-sim as a plain subprocess (for real clients such as bleak and bluetoothctl,
which read DBUS_SYSTEM_BUS_ADDRESS); async tests use `sim_process.simulator()` instead. `Recorder`
keeps every signal org.bluez sends so tests can check orderings.
"""
from __future__ import annotations

import asyncio
import os
import select
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from dbus_fast import Message, MessageType
from dbus_fast.aio import MessageBus

HERE = Path(__file__).resolve().parent.parent
SCENARIOS = HERE / "scenarios"
START_TIMEOUT = 30.0

HRM = "00002a37-0000-1000-8000-00805f9b34fb"
LOCK_CONTROL = "0000fff1-0000-1000-8000-00805f9b34fb"
LOCK_STATE = "0000fff2-0000-1000-8000-00805f9b34fb"
POLAR = "C4:7C:8D:6A:3E:11"
LOCK = "D0:0D:10:C4:00:01"
BTHOME = "A4:C1:38:00:00:01"


def scenario(name: str) -> str:
    return str(SCENARIOS / f"{name}.yaml")


def dev_path(address: str, adapter: str = "hci0") -> str:
    return f"/org/bluez/{adapter}/dev_{address.replace(':', '_')}"


def require_tools() -> None:
    for tool in ("dbus-daemon", "bluetoothctl"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is not installed: the simulator tests need it (apt-get install dbus bluez)")


class SimProcess:
    def __init__(self, args: list[str]) -> None:
        require_tools()
        self.proc = subprocess.Popen([sys.executable, "-m", "bluezsim", *args], cwd=str(HERE),
                                     stdout=subprocess.PIPE, text=True,
                                     env={**os.environ, "PYTHONPATH": str(HERE)})
        ready, _, _ = select.select([self.proc.stdout], [], [], START_TIMEOUT)
        line = self.proc.stdout.readline().strip() if ready else ""
        if not line.startswith("DBUS_SYSTEM_BUS_ADDRESS="):
            self.stop()
            pytest.fail(f"bluez-sim did not announce its bus within {START_TIMEOUT}s (got {line!r})")
        self.address = line.split("=", 1)[1]
        self.env = {**os.environ, "DBUS_SYSTEM_BUS_ADDRESS": self.address}

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture
def sim_env():
    """Factory: `sim_env("demo")` starts the simulator and returns a SimProcess (stopped after the test)."""
    started: list[SimProcess] = []

    def start(name: str = "demo", *extra: str) -> SimProcess:
        p = SimProcess(["--scenario", scenario(name), *extra])
        started.append(p)
        return p

    yield start
    for p in started:
        p.stop()


class Recorder:
    """Records org.bluez signals (member, path, body) received on a client connection."""

    def __init__(self, bus: MessageBus) -> None:
        self.bus = bus
        self.signals: list[tuple[str, str, list]] = []
        self._changed = asyncio.Event()
        bus.add_message_handler(self._on_message)

    @classmethod
    async def attach(cls, bus: MessageBus) -> "Recorder":
        rec = cls(bus)
        await bus.call(Message(destination="org.freedesktop.DBus", path="/org/freedesktop/DBus",
                               interface="org.freedesktop.DBus", member="AddMatch", signature="s",
                               body=["type='signal',sender='org.bluez'"]))
        return rec

    def _on_message(self, msg: Message):
        if msg.message_type is MessageType.SIGNAL and msg.interface != "org.freedesktop.DBus":
            self.signals.append((msg.member, msg.path, msg.body))
            self._changed.set()
        return False

    def clear(self) -> None:
        self.signals.clear()

    def changes(self, path: str, prop: str) -> list:
        """Values of `prop` in PropertiesChanged of `path`, in order (None = invalidated)."""
        out = []
        for member, p, body in self.signals:
            if member == "PropertiesChanged" and p == path:
                if prop in body[1]:
                    out.append(body[1][prop].value)
                elif prop in body[2]:
                    out.append(None)
        return out

    def index(self, predicate) -> int:
        for i, s in enumerate(self.signals):
            if predicate(*s):
                return i
        return -1

    async def wait(self, predicate, timeout: float = 10.0, what: str = "signal", since: int = 0) -> tuple:
        """First signal (from index `since`) matching `predicate(member, path, body)`."""
        deadline = asyncio.get_running_loop().time() + timeout
        seen = since
        while True:
            for s in self.signals[seen:]:
                if predicate(*s):
                    return s
            seen = len(self.signals)
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                raise AssertionError(f"timed out waiting for {what}")
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), remaining)
            except asyncio.TimeoutError:
                pass
