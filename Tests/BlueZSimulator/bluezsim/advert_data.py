"""One LEAdvertisement1 as bluetoothd 5.66 parses and encodes it (src/advertising.c, shared/ad.c).

Properties are parsed in the order of bluetoothd's parsers[] table, so combinations fail exactly
as there (e.g. `Includes: ["local-name"]` together with `LocalName`); the advertising data is laid
out as bt_ad_generate() does and checked against calc_max_adv_len() of a 31-byte controller.
"""
from __future__ import annotations

import asyncio
import logging
import struct
from typing import Any

from dbus_fast import Variant

from . import errors
from .server_app import normalize_uuid

log = logging.getLogger("bluezsim.advertising")

ADVERTISEMENT = "org.bluez.LEAdvertisement1"
PROPERTIES = "org.freedesktop.DBus.Properties"
MAX_ADV_LEN = 31  # BT_AD_MAX_DATA_LEN of a legacy controller
SUPPORTED_INSTANCES = 5
SUPPORTED_INCLUDES = ["tx-power", "appearance", "local-name"]
DEFAULT_TX_POWER = 0  # what the simulated controller reports for the "tx-power" include
BASE_TAIL = "-0000-1000-8000-00805f9b34fb"
# AD types bt_ad_add_data() refuses because bluetoothd manages them itself (shared/ad.c type_reject_list).
REJECTED_DATA_TYPES = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0D, 0x0E, 0x0F,
                       0x10, 0x11, 0x12, 0x14, 0x15, 0x16, 0x19, 0x1F, 0x20, 0x21, 0xFF}
PARSE_FAILED = "Failed to parse advertisement."


class ParseError(Exception):
    pass


def _uuid_bytes(uuid: str) -> bytes:
    if uuid.endswith(BASE_TAIL) and uuid.startswith("0000"):
        return struct.pack("<H", int(uuid[4:8], 16))
    if uuid.endswith(BASE_TAIL):
        return struct.pack("<I", int(uuid[:8], 16))
    return bytes.fromhex(uuid.replace("-", ""))[::-1]


class Advertisement:
    """One registered LEAdvertisement1 and its parsed content."""

    def __init__(self, owner: str, path: str, adapter: Any, instance: int) -> None:
        self.owner = owner
        self.path = path
        self.adapter = adapter
        self.instance = instance
        self.registered = False
        self.type = "peripheral"
        self.service_uuids: list[str] = []
        self.solicit_uuids: list[str] = []
        self.manufacturer_data: dict[int, bytes] = {}
        self.service_data: dict[str, bytes] = {}
        self.data: dict[int, bytes] = {}
        self.includes: list[str] = []
        self.local_name: str | None = None
        self.appearance: int | None = None
        self.duration = 0
        self.timeout = 0
        self.discoverable: bool | None = None
        self.discoverable_timeout = 0
        self.secondary: str | None = None
        self.min_interval = 0
        self.max_interval = 0
        self.tx_power: int | None = None
        self.timeout_task: asyncio.Task | None = None
        self.adv_bytes = b""
        self.scan_rsp_bytes = b""
        self.match_rule: str | None = None
        self.gone = asyncio.Event()  # set when bluetoothd forgets this advertisement

    # ----- parsing (the parsers[] table, in its order) -----------------------------------------

    def apply(self, name: str, v: Variant | None) -> bool:
        """Parses one property (None = property gone); False when bluetoothd's parser fails."""
        try:
            getattr(self, "_p_" + name)(v)
            return True
        except (ParseError, ValueError, TypeError, struct.error) as e:
            log.info("Error parsing %s property of %s: %s", name, self.path, e)
            return False

    def _p_Type(self, v):
        if v is None:
            return
        if v.signature != "s" or v.value not in ("broadcast", "peripheral"):
            raise ParseError("Type must be broadcast or peripheral")
        self.type = v.value

    def _uuids(self, v) -> list[str]:
        if v is None:
            return []
        if v.signature != "as":
            raise ParseError("UUID list must be as")
        out = []
        for text in v.value:
            uuid = normalize_uuid(text)
            if uuid is None:
                raise ParseError(f"invalid UUID {text!r}")
            out.append(uuid)
        return out

    def _p_ServiceUUIDs(self, v):
        self.service_uuids = self._uuids(v)

    def _p_SolicitUUIDs(self, v):
        self.solicit_uuids = self._uuids(v)

    def _p_ManufacturerData(self, v):
        self.manufacturer_data = {}
        if v is None:
            return
        if v.signature != "a{qv}":
            raise ParseError("ManufacturerData must be a{qv}")
        for company, data in v.value.items():
            if data.signature != "ay":
                raise ParseError("ManufacturerData values must be ay")
            self.manufacturer_data[company] = bytes(data.value)

    def _p_ServiceData(self, v):
        self.service_data = {}
        if v is None:
            return
        if v.signature != "a{sv}":
            raise ParseError("ServiceData must be a{sv}")
        for text, data in v.value.items():
            uuid = normalize_uuid(text)
            if uuid is None or data.signature != "ay":
                raise ParseError(f"invalid ServiceData entry {text!r}")
            self.service_data[uuid] = bytes(data.value)

    def _p_Includes(self, v):
        self.includes = []
        if v is None:
            return
        if v.signature != "as":
            raise ParseError("Includes must be as")
        # Unsupported names are skipped silently, as parse_includes() does.
        self.includes = [s for s in v.value if s in SUPPORTED_INCLUDES]

    def _p_LocalName(self, v):
        if v is None:
            self.local_name = None
            return
        if v.signature != "s":
            raise ParseError("LocalName must be s")
        if "local-name" in self.includes:
            raise ParseError("Local name already included")
        self.local_name = v.value or None

    def _p_Appearance(self, v):
        if v is None:
            self.appearance = None
            return
        if v.signature != "q":
            raise ParseError("Appearance must be q")
        if "appearance" in self.includes:
            raise ParseError("Appearance already included")
        self.appearance = v.value

    def _p_Duration(self, v):
        if v is not None and v.signature != "q":
            raise ParseError("Duration must be q")
        self.duration = v.value if v is not None else 0

    def _p_Timeout(self, v):
        if v is not None and v.signature != "q":
            raise ParseError("Timeout must be q")
        self.timeout = v.value if v is not None else 0

    def _p_Data(self, v):
        self.data = {}
        if v is None:
            return
        if v.signature != "a{yv}":
            raise ParseError("Data must be a{yv}")
        for ad_type, data in v.value.items():
            if data.signature != "ay" or ad_type in REJECTED_DATA_TYPES:
                raise ParseError(f"AD type 0x{ad_type:02x} not allowed in Data")
            self.data[ad_type] = bytes(data.value)

    def _p_Discoverable(self, v):
        if v is not None and v.signature != "b":
            raise ParseError("Discoverable must be b")
        self.discoverable = bool(v.value) if v is not None else None

    def _p_DiscoverableTimeout(self, v):
        if v is not None and v.signature != "q":
            raise ParseError("DiscoverableTimeout must be q")
        self.discoverable_timeout = v.value if v is not None else 0

    def _p_SecondaryChannel(self, v):
        if v is None:
            self.secondary = None
            return
        # A legacy controller lists no secondary channels, so any value is refused.
        raise ParseError("SecondaryChannel not supported by this controller")

    def _interval(self, v) -> int:
        if v is None:
            return 0
        if v.signature != "u" or not 20 <= v.value <= 10485759:
            raise ParseError("interval out of range (20 ms .. 10485.759 s)")
        return v.value

    def _p_MinInterval(self, v):
        self.min_interval = self._interval(v)

    def _p_MaxInterval(self, v):
        self.max_interval = self._interval(v)

    def _p_TxPower(self, v):
        if v is None:
            self.tx_power = None
            return
        if v.signature != "n" or not -127 <= v.value <= 20:
            raise ParseError("TxPower out of range")
        self.tx_power = v.value

    PARSERS = ("Type", "ServiceUUIDs", "SolicitUUIDs", "ManufacturerData", "ServiceData", "Includes",
               "LocalName", "Appearance", "Duration", "Timeout", "Data", "Discoverable", "DiscoverableTimeout",
               "SecondaryChannel", "MinInterval", "MaxInterval", "TxPower")

    def parse_all(self, props: dict[str, Variant]) -> None:
        """parse_advertisement(): raises the Failed reply bluetoothd sends."""
        for name in self.PARSERS:
            if name in props and not self.apply(name, props[name]):
                raise errors.failed(PARSE_FAILED)
        if self.discoverable is not None and self.type == "broadcast":
            log.info("Broadcast cannot set flags (%s)", self.path)
            raise errors.failed(PARSE_FAILED)
        if self.timeout and self.discoverable and self.timeout < self.discoverable_timeout:
            log.info("DiscoverableTimeout > Timeout (%s)", self.path)
            raise errors.failed(PARSE_FAILED)
        if self.min_interval > self.max_interval:
            log.info("MinInterval must be less than MaxInterval (%s)", self.path)
            raise errors.failed(PARSE_FAILED)
        if not self.refresh():
            raise errors.failed(PARSE_FAILED)

    # ----- data generation (refresh_legacy_adv) -----------------------------------------------

    def refresh(self) -> bool:
        """Builds advertising data and scan response; False when they exceed the controller's budget."""
        managed_discov = self.type == "peripheral" and self.adapter.discoverable and self.discoverable is None
        ad = bytearray()
        if self.discoverable is not None:
            # Discoverable=false still places a Flags AD (BR/EDR not supported on an LE-only adapter).
            ad += bytes([2, 0x01, (0x02 if self.discoverable else 0x00) | 0x04])
        for ad_type, size in ((0x03, 2), (0x05, 4), (0x07, 16)):
            chunk = b"".join(_uuid_bytes(u) for u in self.service_uuids if len(_uuid_bytes(u)) == size)
            if chunk:
                ad += bytes([len(chunk) + 1, ad_type]) + chunk
        for ad_type, size in ((0x14, 2), (0x1F, 4), (0x15, 16)):
            chunk = b"".join(_uuid_bytes(u) for u in self.solicit_uuids if len(_uuid_bytes(u)) == size)
            if chunk:
                ad += bytes([len(chunk) + 1, ad_type]) + chunk
        for company, data in self.manufacturer_data.items():
            ad += bytes([len(data) + 3, 0xFF]) + struct.pack("<H", company) + data
        for uuid, data in self.service_data.items():
            raw = _uuid_bytes(uuid)
            ad_type = {2: 0x16, 4: 0x20, 16: 0x21}[len(raw)]
            ad += bytes([len(raw) + len(data) + 1, ad_type]) + raw + data
        if "appearance" in self.includes or self.appearance is not None:
            ad += bytes([3, 0x19]) + struct.pack("<H", self.appearance or 0)
        for ad_type, data in self.data.items():
            ad += bytes([len(data) + 1, ad_type]) + data
        budget = MAX_ADV_LEN
        if "tx-power" in self.includes:
            budget -= 3
        if managed_discov:
            budget -= 3
        if "appearance" in self.includes:
            budget -= 4
        if len(ad) > budget:
            log.info("Advertising data too long or couldn't be generated (%d > %d) for %s",
                     len(ad), budget, self.path)
            return False
        # What the kernel adds around bluetoothd's data: managed Flags and the TX power AD.
        on_air = bytearray()
        if managed_discov:
            on_air += bytes([2, 0x01, 0x06])
        on_air += ad
        if "tx-power" in self.includes:
            on_air += bytes([2, 0x0A, DEFAULT_TX_POWER & 0xFF])
        self.adv_bytes = bytes(on_air)
        name = self.local_name
        if name is None and "local-name" in self.includes:
            name = self.adapter.get_properties()["Alias"].value
        scan = b""
        if name:
            raw = name.encode()
            if len(raw) > MAX_ADV_LEN - 2:
                scan = bytes([MAX_ADV_LEN - 1, 0x08]) + raw[: MAX_ADV_LEN - 2]  # shortened name
            else:
                scan = bytes([len(raw) + 1, 0x09]) + raw
        self.scan_rsp_bytes = scan
        return True

    def on_air_name(self) -> str | None:
        if self.local_name:
            return self.local_name
        if "local-name" in self.includes:
            return self.adapter.get_properties()["Alias"].value
        return None

    def describe(self) -> dict:
        return {
            "adapter": self.adapter.name, "owner": self.owner, "path": self.path, "instance": self.instance,
            "type": self.type, "on_air": self.registered and self.adapter.powered,
            "local_name": self.on_air_name(), "service_uuids": self.service_uuids,
            "manufacturer_data": {str(k): v.hex() for k, v in self.manufacturer_data.items()},
            "service_data": {k: v.hex() for k, v in self.service_data.items()},
            "data": {str(k): v.hex() for k, v in self.data.items()},
            "includes": self.includes, "appearance": self.appearance, "discoverable": self.discoverable,
            "tx_power": self.tx_power, "timeout": self.timeout, "duration": self.duration,
            "adv_data": self.adv_bytes.hex(), "adv_data_len": len(self.adv_bytes),
            "scan_response": self.scan_rsp_bytes.hex(), "scan_response_len": len(self.scan_rsp_bytes),
        }
