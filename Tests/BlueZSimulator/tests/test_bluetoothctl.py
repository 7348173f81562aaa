"""bluetoothctl 5.66, BlueZ's own client, driven through a pipe against the simulator."""
from __future__ import annotations

import queue
import re
import subprocess
import threading
import time

from conftest import LOCK, POLAR, dev_path

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]|\x01|\x02")
EXPECT_TIMEOUT = 20.0


class Bluetoothctl:
    """A minimal expect: send a line, wait (bounded) until the output matches a pattern."""

    def __init__(self, env: dict) -> None:
        self.proc = subprocess.Popen(["bluetoothctl"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, env=env, text=True, bufsize=1)
        self.lines: queue.Queue[str] = queue.Queue()
        self.transcript: list[str] = []
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self.lines.put(ANSI.sub("", raw))

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def expect(self, pattern: str, timeout: float = EXPECT_TIMEOUT) -> str:
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                tail = "".join(self.transcript[-40:])
                raise AssertionError(f"bluetoothctl: no output matching {pattern!r} within {timeout}s:\n{tail}")
            try:
                line = self.lines.get(timeout=remaining)
            except queue.Empty:
                continue
            self.transcript.append(line)
            if rx.search(line):
                return line

    def expect_all(self, patterns: list[str], timeout: float = EXPECT_TIMEOUT) -> None:
        """Every pattern must appear, in any order."""
        pending = [re.compile(p) for p in patterns]
        deadline = time.monotonic() + timeout
        while pending:
            line = self.expect("|".join(f"(?:{p.pattern})" for p in pending), max(0.0, deadline - time.monotonic()))
            pending = [p for p in pending if not p.search(line)]

    def close(self) -> None:
        try:
            self.send("quit")
            self.proc.wait(timeout=5)
        except (subprocess.TimeoutExpired, BrokenPipeError, OSError):
            self.proc.kill()
            self.proc.wait()


def test_bluetoothctl_scan_connect_gatt_notify_remove(sim_env):
    sim = sim_env("demo")
    ctl = Bluetoothctl(sim.env)
    try:
        ctl.send("list")
        ctl.expect(r"Controller 00:AA:01:00:00:00")
        ctl.send("scan on")
        ctl.expect_all([rf"NEW.*Device {POLAR} Polar H10 6A3E11", rf"NEW.*Device {LOCK}"])
        ctl.send("scan off")
        ctl.expect(r"Discovering: no")

        ctl.send(f"connect {POLAR}")
        ctl.expect(r"Connection successful")
        ctl.expect(rf"Device {POLAR} ServicesResolved: yes")
        ctl.send("menu gatt")
        ctl.send(f"select-attribute {dev_path(POLAR)}/service0011/char0015")  # Body Sensor Location
        ctl.send("read")
        ctl.expect(r"^\s*01\s")
        ctl.send(f"select-attribute {dev_path(POLAR)}/service0011/char0012")  # Heart Rate Measurement
        ctl.send("notify on")
        ctl.expect(r"Notify started")
        ctl.expect(r"char0012 Value:")  # a 1 Hz measurement arrives
        ctl.send("notify off")
        ctl.expect(r"Notify stopped")
        ctl.send("back")

        ctl.send(f"connect {LOCK}")
        ctl.expect(rf"Device {LOCK} ServicesResolved: yes")
        ctl.send("menu gatt")
        ctl.send(f"select-attribute {dev_path(LOCK)}/service0001/char0002")  # fff1 control
        ctl.send('write "0x75 0x6e 0x6c 0x6f 0x63 0x6b"')  # "unlock"
        ctl.expect(r"Attempting to write")
        ctl.send(f"select-attribute {dev_path(LOCK)}/service0001/char0004")  # fff2 state
        ctl.send("read")
        ctl.expect(r"75 6e 6c 6f 63 6b")
        ctl.send("back")

        ctl.send(f"remove {POLAR}")
        ctl.expect_all([r"Device has been removed", rf"DEL.*Device {POLAR}"])
    finally:
        ctl.close()
