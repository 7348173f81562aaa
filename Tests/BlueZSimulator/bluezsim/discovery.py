"""Adapter discovery (src/adapter.c): per-client sessions and filters, merged filtering, advert reports.

Each D-Bus client has at most one session per adapter and one filter (which may be set before the
session starts). Discovery runs while any session exists; a client's session and filter end when it
leaves the bus. Filters of all clients are OR-ed: a report is delivered if any session accepts it.
"""
from __future__ import annotations

import asyncio
import heapq
import time
from typing import TYPE_CHECKING, Any

from dbus_fast import Variant

from . import errors
from .uuids import normalize_uuid

if TYPE_CHECKING:
    from .adapter import Adapter
    from .device import VirtualPeripheral

RSSI_THRESHOLD = 8  # src/adapter.c: RSSI changes smaller than this are not signalled
SCAN_TICK = 0.02  # how often the simulated radio delivers due advertising reports
MAX_REPORTS_PER_TICK = 5000  # bound on work per tick so a huge crowd cannot starve the loop


class DiscoveryFilter:
    __slots__ = ("uuids", "rssi", "pathloss", "transport", "duplicate", "discoverable", "pattern")

    def __init__(self) -> None:
        self.uuids: set[str] = set()
        self.rssi: int | None = None
        self.pathloss: int | None = None
        self.transport = "auto"
        self.duplicate = False
        self.discoverable = False
        self.pattern = ""

    def is_default(self) -> bool:
        """adapter.c drops a filter equal to the defaults: the client is then unfiltered."""
        return (not self.uuids and self.rssi is None and self.pathloss is None and self.transport == "auto"
                and not self.duplicate and not self.discoverable and not self.pattern)

    def matches(self, p: "VirtualPeripheral", report: dict, rssi: int, discoverable: bool) -> bool:
        if self.transport == "bredr":
            return False  # every virtual peripheral is LE-only
        if self.discoverable and not discoverable:
            return False
        if self.uuids:
            advertised = set(report["uuids"]) | set(report["service_data"])
            if not advertised & self.uuids:
                return False
        if self.rssi is not None and rssi < self.rssi:
            return False
        if self.pathloss is not None:
            tx = report.get("tx_power")
            if tx is None or tx - rssi > self.pathloss:
                return False
        if self.pattern:
            name = report.get("name") or ""
            if not (p.address.lower().startswith(self.pattern.lower()) or name.startswith(self.pattern)):
                return False
        return True


def parse_filter(props: dict[str, Variant]) -> DiscoveryFilter | None:
    """parse_discovery_filter_dict(): every failure is InvalidArguments; defaults mean 'no filter'."""
    f = DiscoveryFilter()
    expected = {"UUIDs": "as", "RSSI": "n", "Pathloss": "q", "Transport": "s", "DuplicateData": "b",
                "Discoverable": "b", "Pattern": "s"}
    for key, variant in props.items():
        sig = expected.get(key)
        if sig is None or variant.signature != sig:
            raise errors.invalid_args()
        value = variant.value
        if key == "UUIDs":
            try:
                f.uuids = {normalize_uuid(u) for u in value}
            except ValueError:
                raise errors.invalid_args() from None
        elif key == "RSSI":
            if value < -127 or value > 20:
                raise errors.invalid_args()
            f.rssi = value
        elif key == "Pathloss":
            if value > 137:
                raise errors.invalid_args()
            f.pathloss = value
        elif key == "Transport":
            if value not in ("auto", "bredr", "le"):
                raise errors.invalid_args()
            f.transport = value
        elif key == "DuplicateData":
            f.duplicate = value
        elif key == "Discoverable":
            f.discoverable = value
        elif key == "Pattern":
            f.pattern = value
    if f.rssi is not None and f.pathloss is not None:
        raise errors.invalid_args()
    return None if f.is_default() else f


class Discovery:
    def __init__(self, adapter: "Adapter") -> None:
        self.adapter = adapter
        self.sim = adapter.sim
        self.sessions: dict[str, DiscoveryFilter | None] = {}  # sender -> filter
        self.filters: dict[str, DiscoveryFilter | None] = {}  # sender -> filter set before/while scanning
        self.discovering = False
        self._task: asyncio.Task | None = None
        self._watch = self._client_left
        self.sim.add_client_watch(self._watch)

    # ----- D-Bus entry points ----------------------------------------------------------------

    def start(self, sender: str) -> None:
        if not self.adapter.powered:
            raise errors.not_ready()
        if sender in self.sessions:
            raise errors.bluez_error("InProgress", "Operation already in progress")
        self.sessions[sender] = self.filters.get(sender)
        self._update_state()

    def stop(self, sender: str) -> None:
        if not self.adapter.powered:
            raise errors.not_ready()
        if sender not in self.sessions:
            raise errors.failed("No discovery started")
        del self.sessions[sender]
        self.filters.pop(sender, None)
        self._update_state()

    def set_filter(self, sender: str, props: dict) -> None:
        if not self.adapter.powered:
            raise errors.not_ready()
        f = parse_filter(props)
        self.filters[sender] = f
        if sender in self.sessions:
            self.sessions[sender] = f

    # ----- lifecycle -------------------------------------------------------------------------

    def _client_left(self, name: str) -> None:
        self.filters.pop(name, None)
        if self.sessions.pop(name, "absent") != "absent":
            self._update_state()

    def shutdown(self) -> None:
        self.sim.remove_client_watch(self._watch)
        if self._task is not None:
            self._task.cancel()
            self._task = None
        self.sessions.clear()
        self.filters.clear()
        self.discovering = False

    def power_off(self) -> None:
        self.sessions.clear()
        self.filters.clear()
        self._update_state()

    def _update_state(self) -> None:
        want = bool(self.sessions)
        if want == self.discovering:
            return
        self.discovering = want
        self.adapter.properties_changed({"Discovering": Variant("b", want)})
        if want:
            self._task = self.sim.spawn(self._scan())
        else:
            if self._task is not None:
                self._task.cancel()
                self._task = None
            self._discovery_stopped()

    def _discovery_stopped(self) -> None:
        """discovery_cleanup(): RSSI/TxPower vanish; temporary non-connectable devices are removed."""
        for dev in list(self.adapter.devices.values()):
            dev.invalidate_rssi()
            if dev.temporary and not dev.connected and not dev.peripheral_connectable():
                self.adapter.remove_device(dev)

    # ----- the simulated radio -----------------------------------------------------------------

    def _effective(self) -> tuple[bool, list[DiscoveryFilter], bool, bool]:
        """(unfiltered, filters, duplicate, rssi_filtered) across every client's session."""
        filters = [f for f in self.sessions.values() if f is not None]
        unfiltered = any(f is None for f in self.sessions.values())
        duplicate = any(f.duplicate for f in filters)
        rssi_filtered = any(f.rssi is not None or f.pathloss is not None for f in filters)
        return unfiltered, filters, duplicate, rssi_filtered

    async def _scan(self) -> None:
        heap: list[tuple[float, int, Any]] = []
        known: set[int] = set()
        seq = 0
        generation = -1
        while True:
            now = time.monotonic()
            if generation != self.sim.peripherals_generation:
                generation = self.sim.peripherals_generation
                for p in self.sim.peripherals_on(self.adapter.name):
                    if id(p) not in known:
                        known.add(id(p))
                        seq += 1
                        heapq.heappush(heap, (now + p.first_report_delay(), seq, p))
            done = 0
            while heap and heap[0][0] <= now and done < MAX_REPORTS_PER_TICK:
                _, s, p = heapq.heappop(heap)
                if not p.present:
                    known.discard(id(p))
                    continue
                self.report(p, p.next_report())
                heapq.heappush(heap, (now + p.interval, s, p))
                done += 1
            await asyncio.sleep(SCAN_TICK)

    def report(self, p: "VirtualPeripheral", report: dict) -> None:
        """btd_adapter_device_found() for one advertising report."""
        from .device import Device

        self.sim.counters["adv_reports"] += 1
        rssi = report["rssi"]
        discoverable = bool(report["flags"] is not None and report["flags"] & 0x03)
        unfiltered, filters, duplicate, rssi_filtered = self._effective()
        matched = unfiltered or any(f.matches(p, report, rssi, discoverable) for f in filters)
        dev = self.adapter.devices.get(p.address)
        if dev is None:
            # Without any client filter, non-discoverable advertisers are ignored (adapter.c).
            if not discoverable and unfiltered and not filters:
                return
            if not matched:
                return
            dev = Device(self.adapter, p)
            self.adapter.devices[p.address] = dev
            dev.apply_report(report, duplicate, 0, announce=False)
            dev.export()
            return
        if not matched:
            return
        dev.apply_report(report, duplicate, 0 if rssi_filtered else RSSI_THRESHOLD, announce=True)
