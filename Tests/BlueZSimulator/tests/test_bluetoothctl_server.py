"""bluetoothctl, BlueZ's own client, as a peripheral app: its advertisement and GATT application
registered with the simulator, then driven by the remote central."""
from __future__ import annotations

import asyncio
import json
import os
import subprocess

from sim_process import central, connect, simulator, wait_for

PHONE = "11:22:33:44:55:66"


class Bluetoothctl:
    """An interactive bluetoothctl whose output is collected for `expect()`."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.output = ""
        self.reader = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def start(cls, address: str) -> "Bluetoothctl":
        proc = await asyncio.create_subprocess_exec(
            "bluetoothctl", stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            env={**os.environ, "DBUS_SYSTEM_BUS_ADDRESS": address})
        return cls(proc)

    async def _read(self) -> None:
        while chunk := await self.proc.stdout.read(4096):
            self.output += chunk.decode(errors="replace")

    async def send(self, line: str, expect: str | None = None) -> None:
        mark = len(self.output)
        self.proc.stdin.write(line.encode() + b"\n")
        await self.proc.stdin.drain()
        if expect is not None:
            await wait_for(lambda: expect in self.output[mark:], what=f"bluetoothctl to print {expect!r}")

    async def quit(self) -> None:
        if self.proc.returncode is None:
            self.proc.stdin.write(b"quit\n")
            await self.proc.stdin.drain()
            try:
                await asyncio.wait_for(self.proc.wait(), 10)
            except asyncio.TimeoutError:
                self.proc.kill()
                await self.proc.wait()
        self.reader.cancel()


def test_bluetoothctl_advertisement_and_gatt_application():
    async def scenario():
        async with simulator() as address:
            ctl = await connect(address)
            btctl = await Bluetoothctl.start(address)
            try:
                await btctl.send("menu advertise")
                await btctl.send("name gattway-ctl")
                await btctl.send("manufacturer 0xffff 01 02 03")
                await btctl.send("back")
                await btctl.send("advertise on", expect="Advertising object registered")
                (text,) = await central(ctl, "GetAdvertisements")
                (advert,) = json.loads(text)
                assert advert["local_name"] == "gattway-ctl"
                assert advert["manufacturer_data"] == {"65535": "010203"}

                await btctl.send("menu gatt")
                await btctl.send("register-service 0x180F", expect="Primary (yes/no)")
                await btctl.send("yes")
                await btctl.send("register-characteristic 0x2A19 read,notify", expect="Enter value")
                await btctl.send("64")
                await btctl.send("register-application", expect="Application registered")
                # The value handle written back: service 0x0015 (after bluetoothd's GAP, GATT and Device
                # Information services), declaration 0x0016, value 0x0017.
                assert "Characteristic (Handle 0x0017)" in btctl.output

                await central(ctl, "Connect", "sa{sv}", [PHONE, {}])
                # bluetoothctl took the value "64" as hex
                assert await central(ctl, "ReadValue", "ssq", [PHONE, "2a19", 0]) == [0, b"\x40"]
                assert f"ReadValue: {PHONE} offset 0 link LE" in btctl.output
                # bluetoothctl exposes NotifyAcquired, so the CCC enable makes bluetoothd acquire its socket.
                assert await central(ctl, "WriteCCC", "ssq", [PHONE, "2a19", 1]) == [0]
                await wait_for(lambda: "AcquireNotify" in btctl.output, what="bluetoothctl's AcquireNotify")
                await btctl.send("back")
                await btctl.send("advertise off", expect="Advertising object unregistered")
            finally:
                await btctl.quit()
                ctl.disconnect()
    asyncio.run(asyncio.wait_for(scenario(), 90))
