"""The `bluez-sim` command as the README shows it: run from the repository root with a relative
scenario path, and one-line errors for scenarios it cannot use."""
from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest
from sim_process import CONTROL, call, connect, require_tools

SIM_DIR = Path(__file__).resolve().parent.parent
REPO_ROOT = SIM_DIR.parent.parent
LAUNCHER = "Tests/BlueZSimulator/bluez-sim"
START_TIMEOUT = 60.0


def test_readme_command_works_from_the_repository_root():
    require_tools()

    async def body():
        proc = await asyncio.create_subprocess_exec(
            LAUNCHER, "--scenario", "Tests/BlueZSimulator/scenarios/demo.yaml", cwd=str(REPO_ROOT),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            line = (await asyncio.wait_for(proc.stdout.readline(), START_TIMEOUT)).decode().strip()
            if not line.startswith("DBUS_SYSTEM_BUS_ADDRESS="):
                err = await asyncio.wait_for(proc.stderr.read(), 10)
                raise AssertionError(f"no bus address (got {line!r}); stderr: {err.decode()}")
            bus = await connect(line.split("=", 1)[1])
            (peripherals,) = await call(bus, CONTROL, "ListPeripherals")
            # demo.yaml: heart-rate strap, lock and thermometer
            assert sorted(peripherals) == ["hci0/A4:C1:38:00:00:01", "hci0/C4:7C:8D:6A:3E:11",
                                           "hci0/D0:0D:10:C4:00:01"]
            bus.disconnect()
        finally:
            if proc.returncode is None:
                proc.terminate()
                await asyncio.wait_for(proc.wait(), 20)

    asyncio.run(body())


@pytest.mark.parametrize("content,expected", [
    (None, "cannot read scenario"),
    ("peripherals: [\n", "cannot read scenario"),
    ("peripherals: 3\n", "peripherals: 3 is not of type 'array'"),
    ("peripherals:\n  - address: C4:7C\n", "peripherals/0/address"),
])
def test_an_unusable_scenario_is_refused_in_one_line(tmp_path, content, expected):
    require_tools()
    path = tmp_path / "scenario.yaml"
    if content is not None:
        path.write_text(content)
    result = subprocess.run([LAUNCHER, "--scenario", str(path)], cwd=str(REPO_ROOT), capture_output=True,
                            text=True, timeout=START_TIMEOUT)
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("bluez-sim: ") and expected in lines[0], lines[0]
    assert str(path) in lines[0]
