"""One connection of the remote central: CCC state, the bounded link buffer drained at a set rate,
and the values received (the `link` of server_io)."""
from __future__ import annotations

import asyncio
import collections
import itertools
import time
from typing import Any

from .server_app import ServerCharacteristic

DEFAULT_LINK_BUFFER = 32
RECEIVED_CAP = 100_000  # per characteristic; older values are dropped (and counted) beyond it


class CentralLink:
    """One connection of the remote central (the `link` of server_io)."""

    def __init__(self, central: Any, adapter: str, address: str, mtu: int,
                 encrypted: bool, trusted: bool) -> None:
        self.central = central
        self.adapter = adapter
        self.address = address.upper()
        self.device_path = f"/org/bluez/{adapter}/dev_{self.address.replace(':', '_')}"
        self.mtu = mtu
        self.encrypted = encrypted
        self.paired = False  # set by a pairing the default agent approved (central_pairing.py)
        self.trusted = trusted
        self.ccc: dict[ServerCharacteristic, int] = {}
        self.rate = 0.0  # notifications per second drained from the link; 0 = as fast as they come
        self.capacity = DEFAULT_LINK_BUFFER
        self.buffer: collections.deque = collections.deque()
        # Per characteristic: (CLOCK_MONOTONIC ns at receipt, value), oldest first.
        self.received: dict[str, collections.deque] = {}
        self.stats = collections.Counter()
        self.drainer: asyncio.Task | None = None
        self.wake = asyncio.Event()
        self.closed = False
        self.device_iface: Any = None  # the Device1 bluetoothd shows for this central

    def has_room(self) -> bool:
        return self.rate <= 0 or len(self.buffer) < self.capacity

    def offer(self, chrc: ServerCharacteristic, value: bytes, indicate: bool) -> bool:
        if self.closed:
            return False
        if self.rate <= 0:
            self._receive(chrc, value, indicate)
            return True
        if len(self.buffer) >= self.capacity:
            self.stats["link_full_drops"] += 1
            self.central.sim.counters["central.link_full_drops"] += 1
            return False
        self.buffer.append((chrc, value, indicate))
        self.stats["queued"] += 1
        self.wake.set()
        return True

    def _receive(self, chrc: ServerCharacteristic, value: bytes, indicate: bool) -> None:
        queue = self.received.get(chrc.uuid)
        if queue is None:
            queue = self.received[chrc.uuid] = collections.deque()
        if len(queue) >= RECEIVED_CAP:
            queue.popleft()
            self.stats["received_overflow"] += 1
        queue.append((time.clock_gettime_ns(time.CLOCK_MONOTONIC), value))
        kind = "indications" if indicate else "notifications"
        self.stats[kind] += 1
        self.central.sim.counters[f"central.{kind}_received"] += 1
        if indicate:
            self.central.gatt.io.confirm(chrc)  # the central's Handle Value Confirmation
        if self.central.signal_received:
            self.central.emit_received(self.address, chrc.uuid, value)

    def set_rate(self, rate: float, capacity: int) -> None:
        self.rate = max(0.0, rate)
        self.capacity = max(1, capacity)
        if self.rate > 0 and self.drainer is None:
            self.drainer = self.central.sim.spawn(self._drain())
        self.wake.set()

    async def _drain(self) -> None:
        """Token bucket: at most `rate` values per second leave the buffer."""
        tokens = 0.0
        last = time.monotonic()
        try:
            while not self.closed:
                if not self.buffer:
                    self.wake.clear()
                    if self.rate <= 0:
                        break
                    await self.wake.wait()
                    last = time.monotonic()
                    continue
                if self.rate <= 0:
                    tokens = float(len(self.buffer))
                else:
                    now = time.monotonic()
                    tokens = min(tokens + (now - last) * self.rate, max(1.0, self.rate / 100))
                    last = now
                drained = False
                while self.buffer and tokens >= 1.0:
                    chrc, value, indicate = self.buffer.popleft()
                    tokens -= 1.0
                    self._receive(chrc, value, indicate)
                    drained = True
                if drained:
                    self.central.gatt.io.resume_readers()
                if self.buffer and self.rate > 0:
                    await asyncio.sleep(max(0.001, (1.0 - tokens) / self.rate))
        finally:
            self.drainer = None
            if not self.closed and self.buffer:
                for chrc, value, indicate in list(self.buffer):
                    self._receive(chrc, value, indicate)
                self.buffer.clear()
                self.central.gatt.io.resume_readers()

    def take(self, uuid: str, limit: int) -> list[bytes]:
        return [value for _, value in self.take_stamped(uuid, limit)]

    def take_stamped(self, uuid: str, limit: int) -> list[tuple[int, bytes]]:
        """Drains up to `limit` (0 = all) received values, each with its CLOCK_MONOTONIC ns of receipt."""
        queue = self.received.get(uuid)
        if not queue:
            return []
        count = len(queue) if limit <= 0 else min(limit, len(queue))
        return [queue.popleft() for _ in itertools.repeat(None, count)]

    def close(self) -> None:
        self.closed = True
        self.wake.set()
        if self.drainer is not None:
            self.drainer.cancel()
            self.drainer = None
        self.buffer.clear()
