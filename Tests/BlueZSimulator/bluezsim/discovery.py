"""Adapter discovery (src/adapter.c): per-client sessions and filters, merged filtering, advert reports.

Each D-Bus client has at most one session per adapter and one filter (which may be set before the
session starts and outlives it). Discovery runs while any session exists; a client's session and filter end when it
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
MIN_SCAN_SLEEP = 0.001  # the shortest wait between deliveries (a 1 ms advertiser gets one report per wake)
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
        self.pattern: str | None = None  # set (even to "") only when the client gave one

    def matches(self, report: dict, rssi: int) -> bool:
        """is_filter_match() for this client (5.66): advertised service UUIDs, then "proximity".

        bluetoothd's proximity test passes whenever Pathloss is unset, so an RSSI filter never drops
        a report here (the kernel filter does, see Discovery._kernel_rssi) and Pathloss never drops
        one at all. Clients must re-check what they receive."""
        if self.uuids and not (set(report["uuids"]) & self.uuids):
            return False
        tx = report.get("tx_power")
        return (self.rssi is None or self.rssi <= rssi or self.pathloss is None
                or (tx is not None and tx - rssi <= self.pathloss))


def parse_filter(props: dict[str, Variant]) -> DiscoveryFilter | None:
    """parse_discovery_filter_dict(): every failure is InvalidArguments; only `{}` means "no filter".

    Any non-empty dict gives the client a filter object, even one that only repeats the defaults,
    and a discovering client with a filter object makes the whole scan a filtered one
    (merge_discovery_filters() returns a kernel filter, start_discovery_complete() sets
    filtered_discovery from it)."""
    if not props:
        return None
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
    return f


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
        # discovery_remove(): the client's filter outlives its session, until `{}` or the client leaves.
        del self.sessions[sender]
        self._update_state()

    def set_filter(self, sender: str, props: dict) -> None:
        if not self.adapter.powered:
            raise errors.not_ready()
        f = parse_filter(props)
        if f is None:
            self.filters.pop(sender, None)  # set_discovery_filter(): `{}` removes a pre-set filter
        else:
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

    def _kernel_rssi(self) -> int | None:
        """merge_discovery_filters(): the kernel drops reports below the lowest RSSI only when every
        session has a filter with RSSI set (and none has Pathloss)."""
        filters = list(self.sessions.values())
        if not filters or any(f is None or f.rssi is None or f.pathloss is not None for f in filters):
            return None
        return min(f.rssi for f in filters)

    def _device_is_discoverable(self, p: "VirtualPeripheral", report: dict, filtered: bool) -> bool:
        """device_is_discoverable(): any filter admits non-discoverable adverts; a Pattern filter
        (case-sensitive prefix of the address string or the advertised name) overrides that."""
        flags = report["flags"] or 0
        discoverable = filtered or bool(flags & 0x03)
        for f in self.sessions.values():
            if f is None or f.pattern is None:
                continue
            discoverable = False
            name = report.get("name") or ""
            if f.pattern == "" or p.address.startswith(f.pattern) or (name and name.startswith(f.pattern)):
                return True
        return discoverable

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
                due, s, p = heapq.heappop(heap)
                if not p.present:
                    known.discard(id(p))
                    continue
                if p.heard_on(self.adapter.name):  # out of range for now (SetHeard): its reports are not received
                    self.report(p, p.next_report(self.adapter.name))
                # Due times advance by the interval, so an advertiser faster than the tick sends every report
                # it owes (several per tick); one that fell more than a tick behind starts afresh from now.
                following = due + p.interval
                heapq.heappush(heap, (following if following > now - SCAN_TICK else now + p.interval, s, p))
                done += 1
            # Sleep until the next report is due (at most a tick), so fast advertisers are not sent in bursts.
            wait = SCAN_TICK if not heap else min(SCAN_TICK, max(MIN_SCAN_SLEEP, heap[0][0] - time.monotonic()))
            await asyncio.sleep(wait)

    def report(self, p: "VirtualPeripheral", report: dict) -> None:
        """btd_adapter_update_found_device() (5.66) for one advertising report, in bluetoothd's order."""
        from .device import Device

        self.sim.counters["adv_reports"] += 1
        self.sim.counters[f"adv_reports.{p.address}"] += 1
        self.sim.counters[f"adv_reports.{self.adapter.name}.{p.address}"] += 1
        sessions = self.sessions
        if not sessions:
            return
        # A scan of BR/EDR only (every session filtered to Transport=bredr) hears no LE adverts.
        if all(f is not None and f.transport == "bredr" for f in sessions.values()):
            return
        rssi = report["rssi"]
        kernel_rssi = self._kernel_rssi()
        if kernel_rssi is not None and rssi < kernel_rssi:
            return
        # adapter->filtered_discovery: some discovering client has a filter object, whatever it holds.
        filtered = any(f is not None for f in sessions.values())
        discoverable = self._device_is_discoverable(p, report, filtered)
        dev = self.adapter.devices.get(p.address)
        created = False
        if dev is None:
            if not discoverable:
                return
            # The object exists from here on, even if no client's filter matches below.
            dev = Device(self.adapter, p)
            self.adapter.devices[p.address] = dev
            created = True
        elif dev.peripheral is not p and not dev.peripheral.present:
            # bluetoothd knows a device by its address: a peripheral back on the air after RemovePeripheral is the
            # same Device object, and connecting to it reaches the peripheral now advertising.
            dev.peripheral = p
        matched = discoverable and (not filtered or any(f is None or f.matches(report, rssi)
                                                        for f in sessions.values()))
        if matched:
            duplicate = any(f is not None and f.duplicate for f in sessions.values())
            dev.apply_report(report, duplicate, 0 if filtered else RSSI_THRESHOLD, announce=not created)
        if created:
            dev.export()
