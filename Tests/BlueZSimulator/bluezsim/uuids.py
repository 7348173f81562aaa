"""Bluetooth UUID normalisation: 16-, 32- and 128-bit forms all become lowercase 128-bit strings."""
from __future__ import annotations

import re

BASE_SUFFIX = "-0000-1000-8000-00805f9b34fb"
_FULL = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def normalize_uuid(uuid: str | int) -> str:
    """'180D', '0x180d', 0x180D, '0000180d' and the full form all give '0000180d-0000-1000-8000-00805f9b34fb'."""
    if isinstance(uuid, int):
        text = f"{uuid:x}"
    else:
        text = uuid.strip().lower()
        if text.startswith("0x"):
            text = text[2:]
    if _FULL.match(text):
        return text
    if re.fullmatch(r"[0-9a-f]{1,8}", text):
        return f"{int(text, 16):08x}{BASE_SUFFIX}"
    raise ValueError(f"not a Bluetooth UUID: {uuid!r}")
