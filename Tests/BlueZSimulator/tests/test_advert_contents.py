"""What bluetoothd keeps from an advertising report: names (src/eir.c) and service data UUIDs
(src/device.c add_service_data())."""
from __future__ import annotations

import asyncio
import json

import pytest
from conftest import Recorder, dev_path
from sim_process import CONTROL, bluez, call, connect, simulator

A1 = "org.bluez.Adapter1"
D1 = "org.bluez.Device1"
BTHOME = "0000fcd2-0000-1000-8000-00805f9b34fb"
HEART_RATE = "0000180d-0000-1000-8000-00805f9b34fb"


def run(coro):
    asyncio.run(asyncio.wait_for(coro, 90))


async def discover(address: str, adverts: dict[str, dict]) -> dict[str, dict]:
    """Adds one advertiser per address and returns the Device1 properties each one is exported with."""
    bus = await connect(address)
    for addr, advert in adverts.items():
        await call(bus, CONTROL, "AddPeripheral", "s", [json.dumps(
            {"address": addr, "interval_ms": 20, "advert": {"flags": 6, **advert}})])
    rec = await Recorder.attach(bus)
    await call(bus, bluez("/org/bluez/hci0", A1), "StartDiscovery")
    found = {}
    for addr in adverts:
        _, _, body = await rec.wait(lambda m, p, b, a=addr: m == "InterfacesAdded" and b[0] == dev_path(a),
                                    what=addr)
        found[addr] = {k: val.value for k, val in body[1][D1].items()}
    return found


# (advertised name bytes, the Name bluetoothd exports)
NAMES = {
    "31:00:00:00:00:01": ("476174fffec32841", "Gat   (A"),  # non-ASCII bytes become spaces
    "31:00:00:00:00:02": ("ff4142c3", "AB"),  # then leading and trailing spaces go
    "31:00:00:00:00:03": ("436166c3a9", "Café"),  # valid UTF-8 is kept whole
    "31:00:00:00:00:04": ("41420043", "AB"),  # an embedded NUL fails validation; the copy stops there
    "31:00:00:00:00:05": ("4142430000", "ABC"),  # trailing NULs are dropped before validation
}


def test_names_are_kept_as_name2utf8_makes_them():
    async def body():
        async with simulator() as address:
            found = await discover(address, {addr: {"name_hex": raw} for addr, (raw, _) in NAMES.items()})
            assert {addr: props.get("Name") for addr, props in found.items()} == \
                {addr: name for addr, (_, name) in NAMES.items()}
    run(body())


@pytest.mark.parametrize("version,merged", [("5.66", False), ("5.68", False), ("5.69", True)])
def test_service_data_uuids_join_uuids_from_5_69(version, merged):
    async def body():
        async with simulator("--bluez-version", version) as address:
            addr = "32:00:00:00:00:01"
            found = await discover(address, {addr: {"uuids": ["180d"], "service_data": {"fcd2": "40"}}})
            props = found[addr]
            assert BTHOME in props["ServiceData"]
            assert props["UUIDs"] == ([HEART_RATE, BTHOME] if merged else [HEART_RATE])
    run(body())
