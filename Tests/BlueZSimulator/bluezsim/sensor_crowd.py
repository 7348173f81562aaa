"""A crowd of passive sensors: `count` advertisers cycling through the formats Gattway decodes, each with its own
random reading, for benchmarks of the decoding path (see scenario.schema.json, crowd.sensors)."""
from __future__ import annotations

import random
from typing import Any

# Formats whose every packet can carry a new value (a stepped measurement), so that each advertisement is decoded
# and published; static beacons (Eddystone UID and URL) would only be decoded once.
CROWD_FORMATS = ["bthome", "mibeacon", "pvvx", "atc1441", "ruuvi_rawv2", "govee_h5075", "switchbot_meter",
                 "inkbird_ibs_th", "ibeacon", "eddystone_tlm"]


def crowd_reading(fmt: str, rng: random.Random) -> tuple[dict, dict]:
    """A plausible reading for `fmt` and the per-packet step that changes it."""
    temperature = round(rng.uniform(15.0, 25.0), 1)
    humidity = rng.randrange(30, 70)
    battery = rng.randrange(20, 101)
    if fmt == "ibeacon":
        return ({"uuid": "%032x" % rng.getrandbits(128), "major": rng.randrange(65536), "minor": 0,
                 "measured_power": -59}, {"minor": 1})
    if fmt == "eddystone_tlm":
        return {"voltage": 3.0, "temperature": temperature, "uptime": 3600.0}, {"temperature": 0.1}
    reading: dict[str, Any] = {"temperature": temperature, "humidity": humidity, "battery": battery}
    if fmt in ("pvvx", "atc1441"):
        reading["voltage"] = 2.95
    if fmt == "ruuvi_rawv2":
        reading = {"temperature": temperature, "humidity": humidity, "pressure": 1013.25, "voltage": 2.95}
    return reading, {"temperature": 0.1}


def generate_sensor_crowd(spec: dict, rng: random.Random, addresses: list[str]) -> list[dict]:
    """One sensor per address, formats in turn; every advertisement carries a new packet (a new value), and first
    reports are spread over the interval so the crowd's load is even."""
    interval = float(spec.get("interval_ms", 1000))
    bindkey = spec.get("bindkey")
    out = []
    for i, address in enumerate(addresses):
        fmt = CROWD_FORMATS[i % len(CROWD_FORMATS)]
        reading, step = crowd_reading(fmt, rng)
        sensor: dict[str, Any] = {"format": fmt, "readings": [reading], "every_advert": True, "step": step}
        if bindkey and fmt in ("bthome", "mibeacon"):
            sensor["bindkey"] = bindkey
        out.append({
            "address": address,
            "address_type": "random",
            "adapter": spec.get("adapter", "hci0"),
            "connectable": False,
            "interval_ms": interval,
            "first_report_ms": rng.uniform(0, interval),
            "rssi": rng.randrange(-90, -40),
            "advert": {"flags": 0x04},
            "sensor": sensor,
        })
    return out
