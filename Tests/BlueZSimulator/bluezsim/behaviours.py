"""Per-characteristic behaviours of virtual peripherals and notification payload patterns.

A behaviour is any object with
    async read(offset: int) -> bytes          the value from `offset` (ATT Read / Read Blob)
    async write(value: bytes, offset: int, kind: str) -> None   kind: "request" | "command" | "reliable"
    async subscribed(enabled: bool, indicate: bool) -> None     the remote CCC was written
raising errors.AttError(code) to answer with an ATT error. `bind(char)` is called once so a
behaviour can reach its characteristic (and `char.notify(value)`).
"""
from __future__ import annotations

import random
import struct
import time
from typing import Any

from .errors import ATT_INVALID_OFFSET, AttError

MAX_VALUE_LEN = 512  # BT_ATT_MAX_VALUE_LEN


class Behaviour:
    """Fixed value: reads return the stored value, writes (where the flags allow) replace it."""

    def __init__(self, spec: dict | None = None) -> None:
        self.spec = spec or {}
        self.char: Any = None

    def bind(self, char: Any) -> None:
        self.char = char

    async def read(self, offset: int) -> bytes:
        value = bytes(self.char.value)
        if offset > len(value):
            raise AttError(ATT_INVALID_OFFSET)
        return value[offset:]

    async def write(self, value: bytes, offset: int, kind: str) -> None:
        current = bytes(self.char.value)
        if offset > len(current):
            raise AttError(ATT_INVALID_OFFSET)
        self.char.value = bytearray(current[:offset] + value)

    async def subscribed(self, enabled: bool, indicate: bool) -> None:
        return None


class Echo(Behaviour):
    """Every write is stored and, if anyone subscribed, sent back as a notification."""

    async def write(self, value: bytes, offset: int, kind: str) -> None:
        await super().write(value, offset, kind)
        if self.char.subscribed:
            await self.char.notify(bytes(self.char.value))


class Counter(Behaviour):
    """Each read returns an incrementing little-endian counter of `size` bytes (default 4)."""

    def __init__(self, spec: dict | None = None) -> None:
        super().__init__(spec)
        self.count = 0
        self.size = int(self.spec.get("size", 4))

    async def read(self, offset: int) -> bytes:
        self.count += 1
        self.char.value = bytearray(self.count.to_bytes(self.size, "little", signed=False)[: self.size])
        return await super().read(offset)


class Refuse(Behaviour):
    """Writes fail with ATT error `code`; with `values`, only those exact values are refused."""

    def __init__(self, spec: dict | None = None) -> None:
        super().__init__(spec)
        self.code = int(self.spec.get("code", 0x03))
        self.values = [_bytes(v) for v in self.spec.get("values", [])]

    async def write(self, value: bytes, offset: int, kind: str) -> None:
        if not self.values or value in self.values:
            raise AttError(self.code)
        await super().write(value, offset, kind)


class Command(Behaviour):
    """A control point: accepts listed commands, refuses listed values with given ATT errors, and
    reflects the last accepted command into another characteristic (stored and notified)."""

    def __init__(self, spec: dict | None = None) -> None:
        super().__init__(spec)
        self.accept = [_bytes(v) for v in self.spec.get("accept", [])]
        self.refuse = {_bytes(k): int(v) for k, v in (self.spec.get("refuse") or {}).items()}
        self.reflect_to = self.spec.get("reflect_to")
        self.other_code = int(self.spec.get("other_code", 0x80))

    async def write(self, value: bytes, offset: int, kind: str) -> None:
        if value in self.refuse:
            raise AttError(self.refuse[value])
        if self.accept and value not in self.accept:
            raise AttError(self.other_code)
        await super().write(value, offset, kind)
        if self.reflect_to:
            target = self.char.peripheral.char_by_uuid(self.reflect_to)
            if target is not None:
                target.value = bytearray(value)
                if target.subscribed:
                    await target.notify(value)


BEHAVIOURS = {"fixed": Behaviour, "echo": Echo, "counter": Counter, "refuse": Refuse, "command": Command}


def make_behaviour(spec: dict | None) -> Behaviour:
    spec = spec or {}
    kind = spec.get("kind", "fixed")
    cls = BEHAVIOURS.get(kind)
    if cls is None:
        raise ValueError(f"unknown behaviour kind {kind!r} (known: {sorted(BEHAVIOURS)})")
    return cls(spec)


def _bytes(v: Any) -> bytes:
    if isinstance(v, bytes):
        return v
    if isinstance(v, str):
        return v.encode()
    if isinstance(v, list):
        return bytes(v)
    raise ValueError(f"cannot make bytes of {v!r}")


class Pattern:
    """Produces successive notification payloads.

    seq-timestamp   u32 sequence LE + u64 CLOCK_MONOTONIC ns LE (12 bytes), for latency benchmarks
    counter         u32 sequence LE
    heart-rate      Heart Rate Measurement: flags 0x10 (u8 bpm, RR present), bpm, one RR interval (1/1024 s)
    fixed:<hex>     the same bytes every time
    random:<n>      n random bytes
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.seq = 0
        self.bpm = 72.0
        if text.startswith("fixed:"):
            self.fixed = bytes.fromhex(text[6:])
            self.kind = "fixed"
        elif text.startswith("random:"):
            self.size = min(int(text[7:]), MAX_VALUE_LEN)
            self.kind = "random"
        elif text in ("seq-timestamp", "counter", "heart-rate"):
            self.kind = text
        else:
            raise ValueError(f"unknown payload pattern {text!r}")

    def next(self) -> bytes:
        seq = self.seq
        self.seq = (seq + 1) & 0xFFFFFFFF
        kind = self.kind
        if kind == "seq-timestamp":
            return struct.pack("<IQ", seq, time.clock_gettime_ns(time.CLOCK_MONOTONIC))
        if kind == "counter":
            return struct.pack("<I", seq)
        if kind == "fixed":
            return self.fixed
        if kind == "random":
            return random.randbytes(self.size)
        # A resting pulse drifting between 55 and 95 bpm; RR matches the rate.
        self.bpm = min(95.0, max(55.0, self.bpm + random.uniform(-2.0, 2.0)))
        bpm = int(round(self.bpm))
        rr = int(round(60.0 / bpm * 1024))
        return struct.pack("<BBH", 0x10, bpm, rr)
