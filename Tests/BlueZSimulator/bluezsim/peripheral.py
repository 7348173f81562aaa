"""A virtual BLE peripheral: what is on the air (adverts, RSSI) and its GATT server."""
from __future__ import annotations

import random
import time
from typing import TYPE_CHECKING, Any

from .behaviours import _bytes
from .gatt_db import CharModel, ServiceModel
from .sensor_formats import SensorAdvertiser
from .uuids import normalize_uuid

if TYPE_CHECKING:
    from .core import Simulator

MAX_NAME_BYTES = 248  # the longest name an EIR / extended advert can carry
DEFAULT_MTU = 247


def parse_address(text: str) -> str:
    parts = text.split(":")
    if len(parts) != 6 or not all(len(p) == 2 and all(c in "0123456789abcdefABCDEF" for c in p) for p in parts):
        raise ValueError(f"not a Bluetooth address: {text!r}")
    return text.upper()


ASCII_WHITESPACE = b" \t\n\v\f\r"  # what g_strstrip() removes


def decode_name(raw: bytes) -> str:
    """The name bluetoothd keeps from a name AD (eir_parse() and name2utf8() of src/eir.c).

    Trailing NULs are dropped first. Valid UTF-8 without NULs is kept whole; anything else is
    treated as ASCII: cut at the first NUL, every non-ASCII byte replaced by a space, then leading
    and trailing whitespace stripped."""
    raw = raw[:MAX_NAME_BYTES].rstrip(b"\0")
    if b"\0" not in raw:  # g_utf8_validate() with a length refuses embedded NULs
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            pass
    ascii_only = bytes(b if b < 0x80 else 0x20 for b in raw.split(b"\0", 1)[0])
    return ascii_only.strip(ASCII_WHITESPACE).decode("ascii")


def parse_advert(spec: dict) -> dict:
    """Normalises an advert spec (scenario form) into the fields of one advertising report."""
    out: dict[str, Any] = {}
    if "flags" in spec:
        out["flags"] = None if spec["flags"] is None else int(spec["flags"]) & 0xFF
    if "name_hex" in spec:
        out["name"] = decode_name(bytes.fromhex(spec["name_hex"]))
        out["name_complete"] = bool(spec.get("name_complete", True))
    elif "name" in spec:
        out["name"] = None if spec["name"] is None else decode_name(str(spec["name"]).encode())
        out["name_complete"] = bool(spec.get("name_complete", True))
    if "uuids" in spec:
        out["uuids"] = [normalize_uuid(u) for u in spec["uuids"]]
    if "manufacturer_data" in spec:
        out["manufacturer_data"] = {_company(k): _data(v) for k, v in (spec["manufacturer_data"] or {}).items()}
    if "service_data" in spec:
        out["service_data"] = {normalize_uuid(k): _data(v) for k, v in (spec["service_data"] or {}).items()}
    for key in ("tx_power", "appearance"):
        if key in spec:
            out[key] = None if spec[key] is None else int(spec[key])
    return out


def _company(k: Any) -> int:
    value = int(k, 0) if isinstance(k, str) else int(k)
    if not 0 <= value <= 0xFFFF:
        raise ValueError(f"company id out of range: {k!r}")
    return value


def _data(v: Any) -> bytes:
    if isinstance(v, str) and v.startswith("hex:"):
        return bytes.fromhex(v[4:])
    if isinstance(v, str):
        return bytes.fromhex(v)
    return _bytes(v)


def peripheral_adapters(spec: dict, default: str) -> list[str]:
    """The adapters that hear a peripheral: `adapters`, else the keys of a per-adapter `rssi`, else `adapter`."""
    listed = spec.get("adapters")
    rssi = spec.get("rssi")
    if listed is not None and "adapter" in spec:
        raise ValueError("give `adapter` or `adapters`, not both")
    if listed is None:
        listed = list(rssi) if isinstance(rssi, dict) else [spec.get("adapter", default)]
    if not listed or len(set(listed)) != len(listed):
        raise ValueError(f"adapters must be distinct and at least one: {listed!r}")
    return [str(a) for a in listed]


def peripheral_signals(rssi: Any, adapters: list[str]) -> dict[str, int]:
    """`rssi` as one value for every adapter, or per adapter (adapters it does not name hear -60 dBm)."""
    if isinstance(rssi, dict):
        unknown = sorted(set(rssi) - set(adapters))
        if unknown:
            raise ValueError(f"rssi names adapters that do not hear the peripheral: {', '.join(unknown)}")
        signals = {a: int(rssi.get(a, -60)) for a in adapters}
    else:
        signals = {a: int(rssi) for a in adapters}
    for value in signals.values():
        check_rssi(value)
    return signals


def check_rssi(rssi: int) -> None:
    if not -127 <= rssi <= 20:  # an HCI advertising report's RSSI range
        raise ValueError(f"RSSI {rssi} is outside -127…20 dBm")


class VirtualPeripheral:
    def __init__(self, sim: "Simulator", spec: dict, adapter: str = "hci0",
                 behaviours: dict[str, Any] | None = None) -> None:
        self.sim = sim
        self.spec = spec
        self.address = parse_address(spec["address"])
        self.address_type = spec.get("address_type", "public")
        if self.address_type not in ("public", "random"):
            raise ValueError(f"{self.address}: address_type must be public or random")
        self.adapters = peripheral_adapters(spec, adapter)
        self.adapter_name = self.adapters[0]  # its key in the simulator; control calls may name any of its adapters
        self.connectable = bool(spec.get("connectable", True))
        # Down to 1 ms: below BLE's 20 ms, so that one simulated sensor can load a receiver like many real ones.
        self.interval = max(0.001, float(spec.get("interval_ms", 200)) / 1000.0)
        first = spec.get("first_report_ms")
        self.first_report = None if first is None else float(first) / 1000.0
        # The signal each adapter hears it with: one peripheral heard by several adapters, each its own RSSI.
        self.signals = peripheral_signals(spec.get("rssi", -60), self.adapters)
        self.unheard: set[str] = set()  # adapters it is out of range of for now (SetHeard)
        self.link: Any = None  # the Device connected to it: a peripheral accepts one link at a time
        walk = spec.get("rssi_walk")
        self.rssi_walk = (int(walk.get("min", -95)), int(walk.get("max", -35)), int(walk.get("step", 3))) \
            if walk else None
        base = {"flags": 0x06 if self.connectable else 0x04, "uuids": [], "manufacturer_data": {},
                "service_data": {}, "tx_power": None, "appearance": None, "name": None, "name_complete": True}
        base.update(parse_advert(spec.get("advert", {})))
        self.advert = base
        seq = spec.get("sequence") or {}
        self.sequence = [parse_advert(a) for a in seq.get("adverts", [])]
        self.sequence_period = float(seq.get("period_s", 1.0))
        self.sensor = SensorAdvertiser(self.address, spec["sensor"]) if spec.get("sensor") else None
        self.t0 = time.monotonic()
        self.mtu = int(spec.get("mtu", DEFAULT_MTU))
        connect = spec.get("connect") or {}
        self.connect_delay = float(connect.get("delay_ms", 20)) / 1000.0
        self.discovery_delay = float(connect.get("discovery_ms", 30)) / 1000.0
        self.connect_failures: list[str] = []  # reasons for the next failing attempts
        if connect.get("fail"):
            self.connect_failures = [connect["fail"]] * int(connect.get("fail_count", 1))
        self.connect_hang = bool(connect.get("hang", False))
        self.att_latency = float(spec.get("att_latency_ms", 0)) / 1000.0
        self.pairing = dict(spec.get("pairing") or {})  # see agent.pair()
        self.present = True
        self.services: list[ServiceModel] = []
        handle = 1
        for s in spec.get("gatt", []):
            svc = ServiceModel(self, s, handle, {normalize_uuid(k): v for k, v in (behaviours or {}).items()})
            self.services.append(svc)
            handle = svc.end_handle + 1
        self.writes: dict[str, list[tuple[bytes, int, str]]] = {}  # char uuid -> (value, offset, kind)

    # ----- air -------------------------------------------------------------------------------

    def first_report_delay(self) -> float:
        if self.first_report is not None:
            return self.first_report
        return random.uniform(0.0, min(self.interval, 0.05))

    @property
    def rssi(self) -> int:
        """The signal on its first adapter."""
        return self.signals[self.adapter_name]

    def heard_on(self, adapter: str) -> bool:
        return adapter in self.signals and adapter not in self.unheard

    def next_report(self, adapter: str | None = None) -> dict:
        """The next advertising report as `adapter`'s radio receives it (default: the first adapter)."""
        adapter = adapter or self.adapter_name
        report = dict(self.advert)
        if self.sequence:
            index = int((time.monotonic() - self.t0) / self.sequence_period) % len(self.sequence)
            report.update(self.sequence[index])
        if self.sensor is not None:
            report.update(self.sensor.advert(time.monotonic()))
        if self.rssi_walk is not None:
            lo, hi, step = self.rssi_walk
            self.signals[adapter] = max(lo, min(hi, self.signals[adapter] + random.randint(-step, step)))
        report["rssi"] = self.signals[adapter]
        return report

    def update_advert(self, patch: dict) -> None:
        """Control interface: changes what is advertised from now on (a sequence or sensor is stopped)."""
        self.advert.update(parse_advert(patch))
        self.sequence = []
        self.sensor = None

    def set_rssi(self, rssi: int, adapter: str | None = None) -> None:
        """The signal `adapter` hears from the next report on (every adapter's when None); the random walk stops."""
        check_rssi(rssi)
        if adapter is not None and adapter not in self.signals:
            raise ValueError(f"{self.address} is not on the air of {adapter} (heard by {', '.join(self.adapters)})")
        for name in [adapter] if adapter is not None else self.adapters:
            self.signals[name] = rssi
        self.rssi_walk = None

    # ----- GATT ------------------------------------------------------------------------------

    def all_chars(self) -> list[CharModel]:
        return [c for s in self.services for c in s.characteristics]

    def char_by_uuid(self, uuid: str) -> CharModel | None:
        want = normalize_uuid(uuid)
        return next((c for c in self.all_chars() if c.uuid == want), None)

    def record_write(self, char: CharModel, value: bytes, offset: int, kind: str) -> None:
        log = self.writes.setdefault(char.uuid, [])
        log.append((bytes(value), offset, kind))
        if len(log) > 10000:  # bounded: tests look at recent writes only
            del log[: len(log) - 10000]
        self.sim.counters[f"writes.{self.address}.{char.uuid}"] += 1
        self.sim.counters["writes"] += 1

    def link_down(self) -> None:
        """The radio link ended: the server forgets CCC state of a non-bonded central."""
        for char in self.all_chars():
            char.remote = None
            char.subscribed = False
            char.indicate = False
            if char.notifier is not None:
                char.notifier.update()

    # ----- bluetoothd lifecycle hooks ---------------------------------------------------------

    def attach(self) -> None:
        """bluetoothd (re)started; devices reappear through discovery."""

    def detach(self) -> None:
        """bluetoothd stopped: its links are gone."""
        self.link = None
        self.link_down()
