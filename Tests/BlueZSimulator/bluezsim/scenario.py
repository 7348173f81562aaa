"""Scenario files: YAML listing virtual peripherals (and generated crowds), validated against
scenario.schema.json."""
from __future__ import annotations

import json
import os
import random
from typing import Any

import yaml

from .sensor_crowd import generate_sensor_crowd

SCHEMA_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scenario.schema.json")


class ScenarioError(Exception):
    pass


class Scenario:
    def __init__(self, data: dict, origin: str) -> None:
        self.data = data
        self.origin = origin

    def adapter_names(self) -> list[str] | None:
        """The adapters the scenario's bluetoothd has (`adapters:`), or None for the default."""
        return self.data.get("adapters")

    def peripheral_specs(self) -> list[dict]:
        specs = list(self.data.get("peripherals") or [])
        crowd = self.data.get("crowd")
        if crowd:
            specs.extend(generate_crowd(crowd))
        return specs

    def apply(self, sim: Any) -> None:
        for spec in self.peripheral_specs():
            try:
                sim.add_peripheral(spec, spec.get("adapter", "hci0"))
            except (ValueError, KeyError, TypeError) as e:
                raise ScenarioError(f"{self.origin}: peripheral {spec.get('address')}: {e}") from e


def load_scenario(path: str) -> Scenario:
    try:
        with open(path, encoding="utf-8") as f:
            data = yaml.safe_load(f) or {}
    except (OSError, yaml.YAMLError) as e:
        raise ScenarioError(f"cannot read scenario {path}: {e}") from e
    validate(data, path)
    return Scenario(data, path)


def validate(data: Any, origin: str) -> None:
    """Checks the scenario against the JSON Schema (when jsonschema is installed)."""
    try:
        import jsonschema
    except ImportError:
        return
    with open(SCHEMA_PATH, encoding="utf-8") as f:
        schema = json.load(f)
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(data), key=lambda e: list(e.path))
    if errors:
        first = errors[0]
        where = "/".join(str(p) for p in first.path) or "(top)"
        raise ScenarioError(f"{origin}: {where}: {first.message}")


def generate_crowd(spec: dict) -> list[dict]:
    """`count` non-connectable random-address advertisers with random and hostile advert data:
    over-long names, invalid UTF-8, empty and maximal manufacturer/service data."""
    rng = random.Random(spec.get("seed", 1))
    count = int(spec.get("count", 1000))
    interval = int(spec.get("interval_ms", 1000))
    adapter = spec.get("adapter", "hci0")
    hostile = bool(spec.get("hostile", True))
    if spec.get("sensors"):
        return generate_sensor_crowd(spec, rng, random_static_addresses(rng, count))
    out = []
    seen: set[str] = set()
    while len(out) < count:
        # Random static address: the two top bits of the first byte are 1.
        raw = [rng.randrange(256) for _ in range(6)]
        raw[0] |= 0xC0
        address = ":".join(f"{b:02X}" for b in raw)
        if address in seen:
            continue
        seen.add(address)
        i = len(out)
        advert: dict[str, Any] = {"flags": rng.choice([0x04, 0x06, 0x1A, 0x00])}
        kind = i % 10 if hostile else 0
        if kind == 1:
            advert["name"] = "X" * 248  # longer than any legacy advert could carry
        elif kind == 2:
            advert["name_hex"] = "476174" + "ff fe c3 28".replace(" ", "") + "41"  # invalid UTF-8 mid-name
        elif kind == 3:
            advert["name"] = ""
        elif kind == 4:
            advert["manufacturer_data"] = {rng.randrange(0x10000): ""}  # empty payload
        elif kind == 5:
            advert["manufacturer_data"] = {0xFFFF: bytes(rng.randrange(256) for _ in range(243)).hex()}
        elif kind == 6:
            advert["service_data"] = {f"{rng.randrange(0x10000):04x}": bytes(rng.randrange(256) for _ in range(
                rng.choice([0, 1, 27]))).hex()}
        else:
            advert["name"] = f"Crowd-{i:04d}"
            advert["manufacturer_data"] = {rng.randrange(0x10000): bytes(
                rng.randrange(256) for _ in range(rng.randrange(0, 24))).hex()}
        out.append({
            "address": address,
            "address_type": "random",
            "adapter": adapter,
            "connectable": False,
            "interval_ms": interval,
            "rssi": rng.randrange(-100, -40),
            "rssi_walk": {"min": -100, "max": -30, "step": 5},
            "advert": advert,
        })
    return out


def random_static_addresses(rng: random.Random, count: int) -> list[str]:
    """`count` distinct random static addresses (the two top bits of the first byte are 1)."""
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < count:
        raw = [rng.randrange(256) for _ in range(6)]
        raw[0] |= 0xC0
        address = ":".join(f"{b:02X}" for b in raw)
        if address not in seen:
            seen.add(address)
            out.append(address)
    return out
