"""Passive sensor formats: measurements in, advertising data out, as the sensors' own firmware builds it.

A scenario peripheral with a `sensor:` section advertises readings (`{temperature: 21.5, humidity: 45.2, ...}`)
in one of the formats Gattway decodes; the simulator encodes each packet itself, with a packet id or counter that
advances with every new packet, and seals BTHome and MiBeacon packets with AES-CCM when a bindkey is given. The
layouts follow the formats' published descriptions (bthome.io, the MiBeacon object definitions, the pvvx and
ATC1441 firmware READMEs, Ruuvi's data format 5, Eddystone's protocol specification).

Each encoder returns an advert patch in `parse_advert()`'s normalised form: service data by full UUID,
manufacturer data by company id, and optionally a name.
"""
from __future__ import annotations

import struct
from typing import Any, Callable

from cryptography.hazmat.primitives.ciphers.aead import AESCCM

from .uuids import normalize_uuid

BTHOME_UUID = normalize_uuid("fcd2")
MIBEACON_UUID = normalize_uuid("fe95")
ENVIRONMENTAL_SENSING_UUID = normalize_uuid("181a")
SWITCHBOT_UUID = normalize_uuid("fd3d")
EDDYSTONE_UUID = normalize_uuid("feaa")

# BTHome v2 object ids (bthome.io/format) for the measurements the simulator sends, in the ascending order the
# specification asks for: name -> (object id, byte width, signed, factor); width 0 marks a binary object.
BTHOME_OBJECTS: dict[str, tuple[int, int, bool, float]] = {
    "battery": (0x01, 1, False, 1),
    "temperature": (0x02, 2, True, 0.01),
    "humidity": (0x03, 2, False, 0.01),
    "pressure": (0x04, 3, False, 0.01),
    "illuminance": (0x05, 3, False, 0.01),
    "voltage": (0x0C, 2, False, 0.001),
    "opening": (0x11, 0, False, 1),
    "co2": (0x12, 2, False, 1),
    "moisture": (0x14, 2, False, 0.01),
    "motion": (0x21, 0, False, 1),
}

MIBEACON_PRODUCT_ID = 0x055B  # LYWSD03MMC, the common Xiaomi thermometer


class SensorError(ValueError):
    pass


def _raw(value: Any, factor: float, what: str) -> int:
    try:
        return round(float(value) / factor)
    except (TypeError, ValueError):
        raise SensorError(f"{what} must be a number, got {value!r}") from None


def _pack_int(value: int, width: int, signed: bool, what: str, big_endian: bool = False) -> bytes:
    try:
        return value.to_bytes(width, "big" if big_endian else "little", signed=signed)
    except OverflowError:
        raise SensorError(f"{what} = {value} does not fit the format's {width}-byte field") from None


def _mac(address: str) -> bytes:
    return bytes.fromhex(address.replace(":", ""))


def _require(reading: dict, *names: str) -> None:
    missing = [n for n in names if n not in reading]
    if missing:
        raise SensorError(f"the reading lacks {', '.join(missing)}")


# ----- BTHome v2 --------------------------------------------------------------------------------------------


def bthome_objects(reading: dict) -> bytes:
    unknown = set(reading) - set(BTHOME_OBJECTS)
    if unknown:
        raise SensorError(f"BTHome: no object for {sorted(unknown)} (have {sorted(BTHOME_OBJECTS)})")
    out = bytearray()
    for name, (object_id, width, signed, factor) in sorted(BTHOME_OBJECTS.items(), key=lambda item: item[1][0]):
        if name not in reading:
            continue
        out.append(object_id)
        if width == 0:
            out.append(1 if reading[name] else 0)
        else:
            out += _pack_int(_raw(reading[name], factor, name), width, signed, name)
    return bytes(out)


def encode_bthome(address: str, reading: dict, counter: int, key: bytes | None) -> dict:
    objects = bthome_objects(reading)
    if key is None:
        # Device information 0x40: version 2, not encrypted, regular interval; packet id object first.
        return {"service_data": {BTHOME_UUID: bytes([0x40, 0x00, counter & 0xFF]) + objects}}
    device_information = 0x41
    count = _pack_int(counter & 0xFFFFFFFF, 4, False, "counter")
    nonce = _mac(address) + bytes([0xD2, 0xFC, device_information]) + count
    sealed = AESCCM(key, tag_length=4).encrypt(nonce, objects, None)
    return {"service_data": {BTHOME_UUID: bytes([device_information]) + sealed[:-4] + count + sealed[-4:]}}


# ----- Xiaomi MiBeacon v5 -----------------------------------------------------------------------------------


def mibeacon_objects(reading: dict) -> bytes:
    out = bytearray()
    if "temperature" in reading and "humidity" in reading:
        out += struct.pack("<HB", 0x100D, 4)
        out += _pack_int(_raw(reading["temperature"], 0.1, "temperature"), 2, True, "temperature")
        out += _pack_int(_raw(reading["humidity"], 0.1, "humidity"), 2, False, "humidity")
    elif "temperature" in reading:
        out += struct.pack("<HB", 0x1004, 2) + _pack_int(_raw(reading["temperature"], 0.1, "t"), 2, True, "temperature")
    elif "humidity" in reading:
        out += struct.pack("<HB", 0x1006, 2) + _pack_int(_raw(reading["humidity"], 0.1, "h"), 2, False, "humidity")
    if "battery" in reading:
        out += struct.pack("<HB", 0x100A, 1) + _pack_int(_raw(reading["battery"], 1, "battery"), 1, False, "battery")
    unknown = set(reading) - {"temperature", "humidity", "battery"}
    if unknown or not out:
        raise SensorError(f"MiBeacon: the simulator sends temperature, humidity and battery, not {sorted(unknown)}")
    return bytes(out)


def encode_mibeacon(address: str, reading: dict, counter: int, key: bytes | None) -> dict:
    objects = mibeacon_objects(reading)
    mac_le = _mac(address)[::-1]
    product = struct.pack("<H", MIBEACON_PRODUCT_ID)
    frame_counter = counter & 0xFF
    if key is None:
        # Version 5, MAC and objects included, not encrypted.
        head = struct.pack("<H", 0x5050) + product + bytes([frame_counter]) + mac_le
        return {"service_data": {MIBEACON_UUID: head + objects}}
    # Version 5, MAC and objects included, encrypted (authentication mode 2).
    head = struct.pack("<H", 0x5858) + product + bytes([frame_counter]) + mac_le
    extended = _pack_int((counter >> 8) & 0xFFFFFF, 3, False, "counter")
    nonce = mac_le + product + bytes([frame_counter]) + extended
    sealed = AESCCM(key, tag_length=4).encrypt(nonce, objects, b"\x11")
    return {"service_data": {MIBEACON_UUID: head + sealed[:-4] + extended + sealed[-4:]}}


# ----- custom thermometer firmware on 0x181A ----------------------------------------------------------------


def encode_pvvx(address: str, reading: dict, counter: int, key: bytes | None) -> dict:
    _require(reading, "temperature", "humidity", "battery", "voltage")
    body = (_mac(address)[::-1]
            + _pack_int(_raw(reading["temperature"], 0.01, "temperature"), 2, True, "temperature")
            + _pack_int(_raw(reading["humidity"], 0.01, "humidity"), 2, False, "humidity")
            + _pack_int(_raw(reading["voltage"], 0.001, "voltage"), 2, False, "voltage")
            + _pack_int(_raw(reading["battery"], 1, "battery"), 1, False, "battery")
            + bytes([counter & 0xFF, 0x00]))
    return {"service_data": {ENVIRONMENTAL_SENSING_UUID: body}}


def encode_atc1441(address: str, reading: dict, counter: int, key: bytes | None) -> dict:
    _require(reading, "temperature", "humidity", "battery", "voltage")
    body = (_mac(address)
            + _pack_int(_raw(reading["temperature"], 0.1, "temperature"), 2, True, "temperature", big_endian=True)
            + _pack_int(_raw(reading["humidity"], 1, "humidity"), 1, False, "humidity")
            + _pack_int(_raw(reading["battery"], 1, "battery"), 1, False, "battery")
            + _pack_int(_raw(reading["voltage"], 0.001, "voltage"), 2, False, "voltage", big_endian=True)
            + bytes([counter & 0xFF]))
    return {"service_data": {ENVIRONMENTAL_SENSING_UUID: body}}


# ----- manufacturer data formats ----------------------------------------------------------------------------


def encode_ruuvi_rawv2(address: str, reading: dict, counter: int, key: bytes | None) -> dict:
    _require(reading, "temperature", "humidity", "pressure")

    def field(name: str, factor: float, width: int, signed: bool, offset: float = 0, missing: int = 0) -> bytes:
        if name not in reading:
            return _pack_int(missing, width, signed, name, big_endian=True)
        raw = _raw(float(reading[name]) - offset, factor, name)
        return _pack_int(raw, width, signed, name, big_endian=True)

    millivolts = _raw(reading.get("voltage", 3.0), 0.001, "voltage") - 1600
    tx_steps = (int(reading.get("tx_power", 4)) + 40) // 2
    if not (0 <= millivolts < 0x7FF and 0 <= tx_steps < 0x1F):
        raise SensorError("Ruuvi: voltage must lie in 1.6…3.646 V and tx_power in -40…20 dBm")
    body = (bytes([0x05])
            + field("temperature", 0.005, 2, True)
            + field("humidity", 0.0025, 2, False)
            + field("pressure", 0.01, 2, False, offset=500.0)
            + field("acceleration_x", 0.001, 2, True, missing=-0x8000)
            + field("acceleration_y", 0.001, 2, True, missing=-0x8000)
            + field("acceleration_z", 0.001, 2, True, missing=-0x8000)
            + struct.pack(">H", millivolts << 5 | tx_steps)
            + bytes([int(reading.get("movement_counter", 0)) & 0xFF])
            + struct.pack(">H", counter % 0xFFFF)
            + _mac(address))
    return {"manufacturer_data": {0x0499: body}}


def encode_govee_h5075(address: str, reading: dict, counter: int, key: bytes | None) -> dict:
    _require(reading, "temperature", "humidity", "battery")
    tenths = _raw(reading["temperature"], 0.1, "temperature")
    packed = abs(tenths) * 1000 + _raw(reading["humidity"], 0.1, "humidity")
    if tenths < 0:
        packed |= 0x800000
    body = bytes([0x00]) + _pack_int(packed, 3, False, "temperature and humidity", big_endian=True) \
        + bytes([int(reading["battery"]), 0x00])
    return {"manufacturer_data": {0xEC88: body}}


def encode_switchbot_meter(address: str, reading: dict, counter: int, key: bytes | None) -> dict:
    _require(reading, "temperature", "humidity", "battery")
    tenths = abs(_raw(reading["temperature"], 0.1, "temperature"))
    degrees, tenth = divmod(tenths, 10)
    above_zero = 0x80 if float(reading["temperature"]) >= 0 else 0x00
    body = bytes([0x54, 0x00, int(reading["battery"]) & 0x7F, tenth, (degrees & 0x7F) | above_zero,
                  int(reading["humidity"]) & 0x7F])
    return {"service_data": {SWITCHBOT_UUID: body}}


def _crc16_modbus(data: bytes) -> int:
    crc = 0xFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
    return crc


def encode_inkbird_ibs_th(address: str, reading: dict, counter: int, key: bytes | None) -> dict:
    # The "company id" of the manufacturer data is the temperature; the name `sps` marks the format.
    _require(reading, "temperature", "battery")
    temperature = _pack_int(_raw(reading["temperature"], 0.01, "temperature"), 2, True, "temperature")
    humidity = _pack_int(_raw(reading.get("humidity", 0), 0.01, "humidity"), 2, False, "humidity")
    probe = bytes([1 if reading.get("external_probe") else 0])
    checksum = struct.pack("<H", _crc16_modbus(temperature + humidity + probe))
    body = humidity + probe + checksum + bytes([int(reading["battery"]), 0x08])
    return {"name": "sps", "manufacturer_data": {int.from_bytes(temperature, "little"): body}}


def encode_ibeacon(address: str, reading: dict, counter: int, key: bytes | None) -> dict:
    _require(reading, "uuid", "major", "minor", "measured_power")
    body = (bytes([0x02, 0x15]) + bytes.fromhex(str(reading["uuid"]).replace("-", ""))
            + struct.pack(">HHb", int(reading["major"]), int(reading["minor"]), int(reading["measured_power"])))
    if len(body) != 23:
        raise SensorError("iBeacon: uuid must be 16 bytes")
    return {"manufacturer_data": {0x004C: body}}


# ----- Eddystone --------------------------------------------------------------------------------------------

URL_SCHEMES = ["http://www.", "https://www.", "http://", "https://"]
URL_EXPANSIONS = [".com/", ".org/", ".edu/", ".net/", ".info/", ".biz/", ".gov/",
                  ".com", ".org", ".edu", ".net", ".info", ".biz", ".gov"]


def _eddystone_url(url: str) -> bytes:
    for scheme, prefix in enumerate(URL_SCHEMES):
        if url.startswith(prefix):
            rest, out = url[len(prefix):], bytearray([scheme])
            break
    else:
        raise SensorError(f"Eddystone URL: {url!r} starts with none of {URL_SCHEMES}")
    while rest:
        code = next((i for i, text in enumerate(URL_EXPANSIONS) if rest.startswith(text)), None)
        if code is not None:
            out.append(code)
            rest = rest[len(URL_EXPANSIONS[code]):]
        else:
            out += rest[0].encode("ascii")
            rest = rest[1:]
    if len(out) > 18:
        raise SensorError(f"Eddystone URL: {url!r} encodes to more than 17 bytes")
    return bytes(out)


def encode_eddystone_uid(address: str, reading: dict, counter: int, key: bytes | None) -> dict:
    _require(reading, "tx_power", "namespace", "instance")
    body = (bytes([0x00]) + struct.pack("b", int(reading["tx_power"])) + bytes.fromhex(reading["namespace"])
            + bytes.fromhex(reading["instance"]) + b"\x00\x00")
    if len(body) != 20:
        raise SensorError("Eddystone UID: namespace is 10 bytes, instance 6")
    return {"service_data": {EDDYSTONE_UUID: body}}


def encode_eddystone_url(address: str, reading: dict, counter: int, key: bytes | None) -> dict:
    _require(reading, "tx_power", "url")
    body = bytes([0x10]) + struct.pack("b", int(reading["tx_power"])) + _eddystone_url(str(reading["url"]))
    return {"service_data": {EDDYSTONE_UUID: body}}


def encode_eddystone_tlm(address: str, reading: dict, counter: int, key: bytes | None) -> dict:
    _require(reading, "voltage", "temperature", "uptime")
    body = (bytes([0x20, 0x00])
            + _pack_int(_raw(reading["voltage"], 0.001, "voltage"), 2, False, "voltage", big_endian=True)
            + _pack_int(_raw(reading["temperature"], 1 / 256, "temperature"), 2, True, "temperature", big_endian=True)
            + _pack_int(int(reading.get("advertisement_count", counter)), 4, False, "count", big_endian=True)
            + _pack_int(_raw(reading["uptime"], 0.1, "uptime"), 4, False, "uptime", big_endian=True))
    return {"service_data": {EDDYSTONE_UUID: body}}


Encoder = Callable[[str, dict, int, "bytes | None"], dict]

ENCODERS: dict[str, Encoder] = {
    "bthome": encode_bthome,
    "mibeacon": encode_mibeacon,
    "pvvx": encode_pvvx,
    "atc1441": encode_atc1441,
    "ruuvi_rawv2": encode_ruuvi_rawv2,
    "govee_h5075": encode_govee_h5075,
    "switchbot_meter": encode_switchbot_meter,
    "inkbird_ibs_th": encode_inkbird_ibs_th,
    "ibeacon": encode_ibeacon,
    "eddystone_uid": encode_eddystone_uid,
    "eddystone_url": encode_eddystone_url,
    "eddystone_tlm": encode_eddystone_tlm,
}
ENCRYPTABLE = {"bthome", "mibeacon"}


class SensorAdvertiser:
    """A peripheral's `sensor:` section: which reading is on the air now, encoded in the sensor's format.

    A new packet (the next reading, its packet id or counter one higher) starts every `period_s`, or with every
    advertising report when `every_advert` is true; between new packets the same bytes are repeated, as a real
    sensor does. `step` adds `n × step[name]` to a measurement in the n-th packet (n counted modulo `step_wrap`),
    so a benchmark's every packet carries a new value."""

    def __init__(self, address: str, spec: dict) -> None:
        self.address = address
        self.format = spec.get("format")
        if self.format not in ENCODERS:
            raise SensorError(f"sensor format {self.format!r} is not one of {sorted(ENCODERS)}")
        self.encode = ENCODERS[self.format]
        self.key: bytes | None = None
        if spec.get("bindkey") is not None:
            if self.format not in ENCRYPTABLE:
                raise SensorError(f"{self.format} has no encryption; only {sorted(ENCRYPTABLE)} take a bindkey")
            self.key = bytes.fromhex(spec["bindkey"])
            if len(self.key) != 16:
                raise SensorError("bindkey must be 32 hex digits")
        self.readings = [dict(r) for r in spec.get("readings") or []]
        if not self.readings:
            raise SensorError("a sensor needs at least one reading")
        self.period = float(spec.get("period_s", 1.0))
        self.every_advert = bool(spec.get("every_advert", False))
        self.step = {k: float(v) for k, v in (spec.get("step") or {}).items()}
        self.step_wrap = int(spec.get("step_wrap", 100))
        self.packets = 0  # packets started so far; the counter on the air is packets (from 1)
        self.current: dict | None = None
        self.t0: float | None = None
        self.encode(address, self.reading(0), 1, self.key)  # a scenario error shows at load time

    def reading(self, n: int) -> dict:
        reading = dict(self.readings[n % len(self.readings)])
        for name, step in self.step.items():
            reading[name] = round(float(reading.get(name, 0)) + (n % self.step_wrap) * step, 6)
        return reading

    def advert(self, now: float) -> dict:
        """The advert patch of the report going out at `now` (monotonic seconds)."""
        if self.t0 is None:
            self.t0 = now
        due = self.packets + 1 if self.every_advert else int((now - self.t0) / self.period) + 1
        if self.current is None or due > self.packets:
            self.packets = max(due, self.packets + 1)
            self.current = self.encode(self.address, self.reading(self.packets - 1), self.packets, self.key)
        return self.current
