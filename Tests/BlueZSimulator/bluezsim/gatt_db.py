"""The GATT database of a virtual peripheral (the remote side of the air), with handles laid out as a
real server would: service declaration, then per characteristic its declaration, value and descriptors."""
from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from .behaviours import MAX_VALUE_LEN, Pattern, _bytes, make_behaviour
from .uuids import normalize_uuid

if TYPE_CHECKING:
    from .peripheral import VirtualPeripheral

CHAR_FLAGS = ("broadcast", "read", "write-without-response", "write", "notify", "indicate",
              "authenticated-signed-writes", "extended-properties", "reliable-write", "writable-auxiliaries")
CCC_UUID = "00002902-0000-1000-8000-00805f9b34fb"
MAX_NOTIFY_BURST = 2000  # per wake-up, so a very high rate cannot monopolise the event loop


class DescModel:
    def __init__(self, char: "CharModel", spec: dict, handle: int) -> None:
        self.char = char
        self.uuid = normalize_uuid(spec["uuid"])
        self.handle = handle
        self.flags = list(spec.get("flags", ["read"]))
        self.value = bytearray(_value(spec.get("value", b"")))


class CharModel:
    def __init__(self, peripheral: "VirtualPeripheral", service: "ServiceModel", spec: dict, handle: int,
                 behaviour: Any = None) -> None:
        self.peripheral = peripheral
        self.service = service
        self.uuid = normalize_uuid(spec["uuid"])
        self.handle = handle  # characteristic declaration
        self.value_handle = handle + 1
        self.flags = list(spec.get("flags", ["read"]))
        unknown = [f for f in self.flags if f not in CHAR_FLAGS]
        if unknown:
            raise ValueError(f"characteristic {self.uuid}: unknown flags {unknown}")
        self.value = bytearray(_value(spec.get("value", b"")))
        if len(self.value) > MAX_VALUE_LEN:
            raise ValueError(f"characteristic {self.uuid}: value longer than {MAX_VALUE_LEN} bytes")
        self.behaviour = behaviour if behaviour is not None else make_behaviour(spec.get("behaviour"))
        if hasattr(self.behaviour, "bind"):
            self.behaviour.bind(self)
        self.descriptors: list[DescModel] = []
        next_handle = handle + 2
        if "notify" in self.flags or "indicate" in self.flags:
            self.descriptors.append(DescModel(self, {"uuid": CCC_UUID, "flags": ["read", "write"],
                                                     "value": [0, 0]}, next_handle))
            next_handle += 1
        for d in spec.get("descriptors", []):
            self.descriptors.append(DescModel(self, d, next_handle))
            next_handle += 1
        self.end_handle = next_handle - 1
        self.subscribed = False
        self.indicate = False
        self.remote: Any = None  # the BlueZ-side characteristic object while it can deliver
        self.notifier: Notifier | None = None
        notify_spec = spec.get("notify")
        if notify_spec:
            self.notifier = Notifier(self, float(notify_spec.get("rate_hz", 1.0)),
                                     int(notify_spec.get("count", 0)), notify_spec.get("pattern", "counter"))

    async def notify(self, value: bytes) -> None:
        """Sends a notification (or indication) to the central, as the peripheral's firmware would."""
        self.notify_now(value)

    def notify_now(self, value: bytes) -> bool:
        remote = self.remote
        counters = self.peripheral.sim.counters
        if remote is None or not self.subscribed:
            counters["notifications_not_subscribed"] += 1
            return False
        return remote.deliver(value[:MAX_VALUE_LEN])

    async def set_subscribed(self, enabled: bool, indicate: bool) -> None:
        """The central wrote the CCC descriptor."""
        if enabled == self.subscribed and indicate == self.indicate:
            return
        self.subscribed = enabled
        self.indicate = indicate and enabled
        ccc = next((d for d in self.descriptors if d.uuid == CCC_UUID), None)
        if ccc is not None:
            ccc.value = bytearray([(2 if indicate else 1) if enabled else 0, 0])
        if hasattr(self.behaviour, "subscribed"):
            await self.behaviour.subscribed(enabled, indicate)
        if self.notifier is not None:
            self.notifier.update()

    def start_notifying(self, rate_hz: float, count: int, pattern: str) -> None:
        """Control interface: (re)starts a notification burst at `rate_hz` (count 0 = endless)."""
        if self.notifier is not None:
            self.notifier.cancel()
        self.notifier = Notifier(self, rate_hz, count, pattern) if rate_hz > 0 else None
        if self.notifier is not None:
            self.notifier.update()


class ServiceModel:
    def __init__(self, peripheral: "VirtualPeripheral", spec: dict, handle: int,
                 behaviours: dict[str, Any]) -> None:
        self.uuid = normalize_uuid(spec["uuid"])
        self.primary = bool(spec.get("primary", True))
        self.handle = handle
        self.characteristics: list[CharModel] = []
        next_handle = handle + 1
        for c in spec.get("characteristics", []):
            char = CharModel(peripheral, self, c, next_handle, behaviours.get(normalize_uuid(c["uuid"])))
            self.characteristics.append(char)
            next_handle = char.end_handle + 1
        self.end_handle = next_handle - 1


class Notifier:
    """Emits notifications at a steady rate while the characteristic is subscribed and connected.

    Paced against the monotonic clock (not by sleeping once per value), so high rates stay accurate:
    each wake-up sends every value that has become due, up to MAX_NOTIFY_BURST.
    """

    def __init__(self, char: CharModel, rate_hz: float, count: int, pattern: str) -> None:
        if rate_hz <= 0:
            raise ValueError("notify rate must be positive")
        self.char = char
        self.rate = rate_hz
        self.count = count
        self.pattern = Pattern(pattern)
        self.sent = 0
        self.task: asyncio.Task | None = None

    def update(self) -> None:
        """Starts or stops the pacing task to match the link and CCC state."""
        active = self.char.subscribed and self.char.remote is not None
        if active and self.task is None and (self.count == 0 or self.sent < self.count):
            self.task = self.char.peripheral.sim.spawn(self._run())
        elif not active:
            self.cancel()

    def cancel(self) -> None:
        if self.task is not None:
            self.task.cancel()
            self.task = None

    async def _run(self) -> None:
        try:
            start = time.monotonic()
            base = self.sent
            while self.count == 0 or self.sent < self.count:
                due = base + int((time.monotonic() - start) * self.rate) + 1
                if self.count:
                    due = min(due, self.count)
                burst = 0
                while self.sent < due and burst < MAX_NOTIFY_BURST:
                    self.char.notify_now(self.pattern.next())
                    self.sent += 1
                    burst += 1
                if burst >= MAX_NOTIFY_BURST:
                    await asyncio.sleep(0)  # let other work run, then continue the backlog
                    continue
                # Sleep until the next value is due, but at least 1 ms so high rates go out in batches.
                next_due = start + (self.sent - base) / self.rate
                await asyncio.sleep(max(0.001, next_due - time.monotonic()))
        finally:
            self.task = None


def _value(v: Any) -> bytes:
    if isinstance(v, str) and v.startswith("hex:"):
        return bytes.fromhex(v[4:])
    return _bytes(v) if v != b"" else b""
