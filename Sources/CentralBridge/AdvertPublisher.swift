import BluetoothCore
import BridgeCore
import Logging
import MQTTCore
import Metrics
import Synchronization

/// Publishes what tracked devices advertise: the raw advert JSON on `<device>/advert` and the measurements their
/// decoder finds on `<device>/state`, each when it changed and at most once per `bluetooth.advert_min_interval`.
///
/// It owns the advert state of every tracked device, so it is the one place this logic lives, called from two
/// sides: the bridge actor (a device appeared, its name changed, a flush timer fired, …) and, for passive devices
/// (`connect: never`, no fleet), the D-Bus connection's loop itself (`takeReport`), which is the hot path: an
/// advertisement is merged, decoded and handed to the outbox in the same turn that libdbus dispatched it, with no
/// task or actor hop, and the outbox publishes it in place on that same queue. The flushes it defers (the end of
/// `advert_min_interval`) run on that loop's timers too (`deferFlushes(on:toActor:)`). What only the actor can do
/// (tell Home Assistant discovery about new measurements; a timer where the loop has none) comes back as
/// `FollowUp`s, which are rare: a hop per advertisement would cost more than all the rest.
///
/// What the hot path takes is newer than the actor's object tree: `takeUnsynced` hands the actor the newest state
/// of each device that changed since, which it applies before reading the tree (events, the devices list, scans,
/// releasing unheard devices). Memory is bounded by the tracked devices (one entry each, replaced, never grown).
final class AdvertPublisher: Sendable {
    /// What the bridge actor must do after an update.
    enum FollowUp: Sendable {
        case flushAdvert(after: Duration)
        case flushState(after: Duration)
        /// A decoded advertisement whose measurements differ in kind from the last one reported.
        case measurementsDecoded(DecodedAdvertisement)
    }

    /// How one tracked device is published.
    struct Registration: Sendable {
        var address: BluetoothAddress
        var deviceTopic: String
        var advertTopic: String
        var stateTopic: String
        var decoder: DecoderSelection
        var bindkey: Bindkey?
        /// Whether its advertisement reports are taken on the D-Bus loop (a passive device outside a fleet).
        var takesReports: Bool
    }

    private struct Device: Sendable {
        var registration: Registration
        /// The advert-visible state, newest first here.
        var state: BLEDeviceState
        /// `state` is newer than the actor's tree; and when a report was last taken.
        var unsynced = false
        var lastReport: BridgeClock.Instant?
        /// The loop has taken this device's reports since it was (re)registered for them: its advertised data and
        /// RSSI here are newer than what the actor's event stream may still bring.
        var reportsTaken = false
        var adverts: AdvertThrottle<BridgeClock.Instant>
        /// The address member of its adverts.
        var advertLayout: AdvertDocumentLayout
        /// The name, manufacturer or service data changed since the decoder last read them (or it never did):
        /// bluetoothd reports every RSSI change, and an unchanged packet is neither decoded (decrypted) again nor
        /// mistaken for a replay.
        var decoderInputChanged = true
        var lastStatePayload: [UInt8] = []
        var lastStatePublished: BridgeClock.Instant?
        /// The newest decoded state while it waits for the end of `advert_min_interval` (empty otherwise: a state
        /// document is never empty).
        var pendingStatePayload: [UInt8] = []
        var statePending: Bool { !pendingStatePayload.isEmpty }
        var stateFlushScheduled = false
        /// The last decoded advertisement reported as a follow-up (its measurements' kinds matter, not values).
        var lastReportedMeasurements: DecodedAdvertisement?
        /// The keys of its state document, made with `lastReportedMeasurements`.
        var stateLayout: StateDocumentLayout?
        /// Repeats by packet id (8-bit in the formats that have one), of this device alone: a table shared by every
        /// device would cost a search of it per advertisement, and a repeat is forgotten after seconds anyway.
        var packetIDs = PacketIDDeduplicator<BridgeClock.Instant>(capacity: 1)
        /// The service UUID its advertisements name, read once.
        var serviceUUIDs = UUIDTextCache()
        /// What the decoder reads, read again in place for each advertisement with new data.
        var facts: AdvertisementFacts
    }

    /// Where the flushes the hot path defers run: the report thread's timer, and the way to the actor for what only
    /// it can do.
    private struct ReportThread: Sendable {
        var timer: BLESinkTimer
        var toActor: @Sendable (String, [FollowUp]) -> Void
    }

    /// Room the next state and advert of any device are written into. A new one swaps with the device's last
    /// published payload, whose room is then written into next: payloads are written in place, with no array made
    /// for each, and a device keeps only what it published (and a state that waits).
    private struct PayloadRoom: Sendable {
        var state: [UInt8] = []
        var advert: [UInt8] = []
    }

    private struct State: Sendable {
        var devices = PathTable<Device>()
        var room = PayloadRoom()
        var reportThread: ReportThread?
        /// The devices whose `unsynced` is set, each once: the actor's sync visits these, not every device.
        var unsyncedPaths: [String] = []
        /// Replays by encryption counter (32-bit), remembered for devices let go and tracked again too.
        var encryptionCounters = PacketIDDeduplicator<BridgeClock.Instant>(
            modulus: 1 << 32, window: 1 << 31, resetAfter: .seconds(1 << 40))
        var refusals = RefusalLog()
    }

    /// A newer device state the actor has not applied to its tree yet, and when it was heard.
    struct UnsyncedState: Sendable {
        var path: String
        var state: BLEDeviceState
        var heard: BridgeClock.Instant
    }

    private let state = Mutex(State())
    private let outbox: Outbox
    private let clock: BridgeClock
    private let started: BridgeClock.Instant
    private let minimumInterval: Duration
    /// The QoS of `<device>/state` (`mqtt.qos`, as every published value); the raw advert JSON is QoS 0.
    private let stateQoS: MQTTQoS
    private let openAESCCM: AESCCMOpening?
    private let logger: Logger

    init(
        outbox: Outbox, clock: BridgeClock, started: BridgeClock.Instant, minimumInterval: Duration,
        stateQoS: MQTTQoS, openAESCCM: AESCCMOpening?, logger: Logger
    ) {
        self.outbox = outbox
        self.clock = clock
        self.started = started
        self.minimumInterval = minimumInterval
        self.stateQoS = stateQoS
        self.openAESCCM = openAESCCM
        self.logger = logger
    }

    // MARK: - Registration (bridge actor)

    /// Starts (or updates, keeping what was published) publishing the device at `path`, from `state`.
    ///
    /// A device whose reports go back to the actor (a connectable device whose link ended) stops counting as
    /// taken here: from then on the actor's events are the newer ones, and `advertChanged` must apply them. What
    /// the loop took last is still handed over by `takeUnsynced` first.
    func register(_ path: String, _ registration: Registration, state deviceState: BLEDeviceState) {
        state.withLock { state in
            if state.devices[path] != nil {
                if !registration.takesReports { state.devices[path]!.reportsTaken = false }
                state.devices[path]!.registration = registration
                state.devices[path]!.advertLayout = AdvertDocumentLayout(address: registration.address)
            } else {
                state.devices[path] = Device(
                    registration: registration, state: deviceState,
                    adverts: AdvertThrottle(minimumInterval: minimumInterval),
                    advertLayout: AdvertDocumentLayout(address: registration.address),
                    facts: AdvertisementFacts(address: registration.address))
            }
        }
    }

    /// Stops publishing the device at `path` and forgets its state.
    func unregister(_ path: String) {
        _ = state.withLock { $0.devices.removeValue(forKey: path) }
    }

    /// The decoded state last published for the device (empty when none).
    func lastStatePayload(of path: String) -> [UInt8] {
        state.withLock { $0.devices[path]?.lastStatePayload ?? [] }
    }

    /// When the loop last took a report of the device at `path`; nil when it took none.
    func lastReport(of path: String) -> BridgeClock.Instant? {
        state.withLock { state in state.devices.index(of: path).flatMap { state.devices[at: $0].lastReport } }
    }

    /// Takes the states newer than the actor's tree, to apply there.
    func takeUnsynced() -> [UnsyncedState] {
        state.withLock { state in
            var unsynced: [UnsyncedState] = []
            unsynced.reserveCapacity(state.unsyncedPaths.count)
            for path in state.unsyncedPaths {
                // Through the index, in place: the table's getter copies the whole Device out (every field
                // retained and released), for each device heard since the last sync.
                guard let index = state.devices.index(of: path),
                    let taken = Self.takeUnsynced(&state.devices[at: index], path: path, started: started)
                else { continue }
                unsynced.append(taken)
            }
            state.unsyncedPaths.removeAll(keepingCapacity: true)
            return unsynced
        }
    }

    private static func takeUnsynced(
        _ device: inout Device, path: String, started: BridgeClock.Instant
    ) -> UnsyncedState? {
        guard device.unsynced else { return nil }
        device.unsynced = false
        return UnsyncedState(path: path, state: device.state, heard: device.lastReport ?? started)
    }

    /// From now on the flushes that `takeReport` defers (the end of `advert_min_interval`) run on `timer`, the
    /// thread that takes the reports, instead of going to the actor to start a timer there: a flush then costs no
    /// wake of another thread and no hop. What only the actor can do still goes to `toActor`.
    func deferFlushes(on timer: BLESinkTimer, toActor: @escaping @Sendable (String, [FollowUp]) -> Void) {
        state.withLock { $0.reportThread = ReportThread(timer: timer, toActor: toActor) }
    }

    // MARK: - Updates

    /// The D-Bus loop's hot path: an advertisement report of the device at `path`. Returns false (the report goes
    /// to the actor as an event) when the device is not one whose reports are taken here.
    func takeReport(
        _ path: String, _ properties: [BLEDeviceProperty], followUps: (String, [FollowUp]) -> Void
    ) -> Bool {
        let now = clock.now
        let (taken, actions, reportThread) = state.withLock { state -> (Bool, [FollowUp], ReportThread?) in
            // The device is read and changed in place, through its index: no copy of it (`values[index]` as a
            // getter copies the whole Device), no second lookup of the path. Most reports repeat the last one
            // (duplicates on), and then nothing more is done.
            guard let index = state.devices.index(of: path) else { return (false, [], nil) }
            let merged = Self.merge(properties, into: &state.devices[at: index], at: now)
            guard merged.taken else { return (false, [], nil) }
            var actions: [FollowUp] = []
            if merged.changed {
                actions = update(
                    &state.devices[at: index], room: &state.room, refusals: &state.refusals,
                    encryptionCounters: &state.encryptionCounters, at: now, mayPublish: true)
            }
            if merged.firstSinceSync { state.unsyncedPaths.append(path) }
            return (true, actions, actions.isEmpty ? nil : state.reportThread)
        }
        if !actions.isEmpty {
            let rest = reportThread.map { deferFlushes(of: path, actions, on: $0) } ?? actions
            if !rest.isEmpty { followUps(path, rest) }
        }
        return taken
    }

    /// Starts the flushes among `actions` on the report thread's timer; returns the rest, for the actor.
    private func deferFlushes(of path: String, _ actions: [FollowUp], on reportThread: ReportThread) -> [FollowUp] {
        var rest: [FollowUp] = []
        for action in actions {
            switch action {
            case .flushAdvert(let wait):
                reportThread.timer.execute(after: wait) { [self] in flushOnReportThread(path, advert: true) }
            case .flushState(let wait):
                reportThread.timer.execute(after: wait) { [self] in flushOnReportThread(path, advert: false) }
            case .measurementsDecoded:
                rest.append(action)
            }
        }
        return rest
    }

    /// A flush `takeReport` deferred, due now on the report thread. A device that is gone needs none; a device whose
    /// reports went back to the actor meanwhile (its link ended) is the actor's to flush, with what it may publish.
    /// Otherwise it publishes here: a device whose reports are taken here is outside a fleet, so it may.
    private func flushOnReportThread(_ path: String, advert: Bool) {
        let now = clock.now
        let (forActor, deferred, reportThread) = state.withLock {
            state -> (forActor: [FollowUp], deferred: [FollowUp], ReportThread?) in
            guard let index = state.devices.index(of: path) else { return ([], [], nil) }
            guard Self.takesReports(&state.devices[at: index]) else {
                return ([advert ? .flushAdvert(after: .zero) : .flushState(after: .zero)], [], state.reportThread)
            }
            if advert {
                flushAdvert(&state.devices[at: index], room: &state.room.advert, at: now, mayPublish: true)
                return ([], [], nil)
            }
            return ([], flushState(&state.devices[at: index], at: now, mayPublish: true), state.reportThread)
        }
        guard let reportThread else { return }
        if !forActor.isEmpty { reportThread.toActor(path, forActor) }
        if !deferred.isEmpty {
            let rest = deferFlushes(of: path, deferred, on: reportThread)
            if !rest.isEmpty { reportThread.toActor(path, rest) }
        }
    }

    private static func takesReports(_ device: inout Device) -> Bool { device.registration.takesReports }

    /// Merges a report into `device` when its reports are taken here: whether it was, whether it changed what an
    /// advert shows, and whether it is the first since the actor's last sync.
    @inline(__always)
    private static func merge(
        _ properties: [BLEDeviceProperty], into device: inout Device, at now: BridgeClock.Instant
    ) -> (taken: Bool, changed: Bool, firstSinceSync: Bool) {
        guard device.registration.takesReports else { return (false, false, false) }
        let firstSinceSync = !device.unsynced
        device.lastReport = now
        device.reportsTaken = true
        device.unsynced = true
        var dataChanged = false
        let changed = device.state.apply(properties, dataChanged: &dataChanged)
        if dataChanged { device.decoderInputChanged = true }
        return (true, changed, firstSinceSync)
    }

    /// The actor's path: the device's advert-visible state is now `deviceState` (from the tree).
    func advertChanged(_ path: String, state deviceState: BLEDeviceState, mayPublish: Bool) -> [FollowUp] {
        let now = clock.now
        return state.withLock { state in
            guard var device = state.devices[path] else { return [] }
            state.devices[path] = nil
            // Once the D-Bus loop takes this device's reports, its advertised data and RSSI are newer than any the
            // actor can bring: the actor's events come through a stream that may still hold reports from before
            // the device was registered, and publishing one of those would publish an older reading after a newer
            // one. The actor's part is then the rest (names, address); the next report brings the data anyway.
            var merged = deviceState
            if device.unsynced || device.reportsTaken {
                merged.rssi = device.state.rssi
                merged.txPower = device.state.txPower
                merged.manufacturerData = device.state.manufacturerData
                merged.serviceData = device.state.serviceData
            }
            if !merged.hasSameAdvertisedData(as: device.state) { device.decoderInputChanged = true }
            device.state = merged
            let actions = update(
                &device, room: &state.room, refusals: &state.refusals,
                encryptionCounters: &state.encryptionCounters, at: now, mayPublish: mayPublish)
            state.devices[path] = device
            return actions
        }
    }

    /// A flush timer of the advert topic fired.
    func flushAdvert(_ path: String, mayPublish: Bool) {
        let now = clock.now
        state.withLock { state in
            guard let index = state.devices.index(of: path) else { return }
            flushAdvert(&state.devices[at: index], room: &state.room.advert, at: now, mayPublish: mayPublish)
        }
    }

    /// A flush timer of the state topic fired.
    func flushState(_ path: String, mayPublish: Bool) -> [FollowUp] {
        let now = clock.now
        return state.withLock { state in
            guard let index = state.devices.index(of: path) else { return [] }
            return flushState(&state.devices[at: index], at: now, mayPublish: mayPublish)
        }
    }

    // MARK: - Under the lock

    /// The advert flush timer of `device` fired: publishes what it held back.
    private func flushAdvert(
        _ device: inout Device, room: inout [UInt8], at now: BridgeClock.Instant, mayPublish: Bool
    ) {
        guard device.adverts.flushTimerFired(), let payload = makeAdvert(&device, room: &room, at: now), mayPublish
        else { return }
        // Under the lock, as every publication of a device, so that none overtakes another.
        outbox.send(
            MQTTMessage(topic: device.registration.advertTopic, payload: payload, qos: .atMostOnce, retain: true))
    }

    /// The state flush timer of `device` fired: publishes the newest state held back.
    private func flushState(_ device: inout Device, at now: BridgeClock.Instant, mayPublish: Bool) -> [FollowUp] {
        device.stateFlushScheduled = false
        var actions: [FollowUp] = []
        guard device.statePending else { return actions }
        var waiting: [UInt8] = []
        swap(&waiting, &device.pendingStatePayload)
        publishState(&device, newest: &waiting, at: now, mayPublish: mayPublish, actions: &actions)
        return actions
    }

    /// The device's advert, written in `room`, when it is not the one published last.
    private func makeAdvert(_ device: inout Device, room: inout [UInt8], at now: BridgeClock.Instant) -> [UInt8]? {
        AdvertPayload.write(of: device.state, layout: device.advertLayout, into: &room)
        return device.adverts.publishIfNew(&room, at: now)
    }

    private func update(
        _ device: inout Device, room: inout PayloadRoom, refusals: inout RefusalLog,
        encryptionCounters: inout PacketIDDeduplicator<BridgeClock.Instant>, at now: BridgeClock.Instant,
        mayPublish: Bool
    ) -> [FollowUp] {
        var actions: [FollowUp] = []
        // Every message is sent as it is made, under the lock, so that the actor and the D-Bus loop cannot reorder
        // two publications of one device (and no list of them is allocated per advertisement).
        decode(
            &device, room: &room, refusals: &refusals, encryptionCounters: &encryptionCounters, at: now,
            mayPublish: mayPublish, actions: &actions)
        switch device.adverts.advertChanged(at: now) {
        case .makeAdvert:
            // In a fleet only the owner publishes; it publishes the newest advert when it starts owning.
            if let payload = makeAdvert(&device, room: &room.advert, at: now), mayPublish {
                outbox.send(
                    MQTTMessage(
                        topic: device.registration.advertTopic, payload: payload, qos: .atMostOnce, retain: true))
            }
        case .scheduleFlush(let wait):
            actions.append(.flushAdvert(after: wait))
        case .none:
            break
        }
        return actions
    }

    /// Decodes the device's advertisement with its configured decoder. Unchanged advertised data is not decoded
    /// again, nor is a packet id already seen; a packet that does not decode is counted by reason and logged at a
    /// limited rate.
    private func decode(
        _ device: inout Device, room: inout PayloadRoom, refusals: inout RefusalLog,
        encryptionCounters: inout PacketIDDeduplicator<BridgeClock.Instant>, at now: BridgeClock.Instant,
        mayPublish: Bool, actions: inout [FollowUp]
    ) {
        let registration = device.registration
        guard registration.decoder != .none else { return }
        // Known from the merge, not from a copy of the last input kept to compare: each report's data would then
        // be compared twice, and the copy retained and released.
        guard device.decoderInputChanged else { return }
        device.decoderInputChanged = false
        device.facts.address = registration.address
        device.facts.read(
            manufacturerData: device.state.manufacturerData, serviceDataByUUIDText: device.state.serviceData,
            localName: device.state.name, uuids: &device.serviceUUIDs)
        let context = DecodingContext(bindkey: registration.bindkey, openAESCCM: openAESCCM)
        let decoded: DecodedAdvertisement
        do {
            guard let result = try registration.decoder.decode(device.facts, context: context) else { return }
            decoded = result
        } catch {
            Counter(label: "gattway.central.adverts_undecodable", dimensions: [("reason", "\(error.code)")]).increment()
            let at = started.duration(to: now)
            if case .log = refusals.report("\(error.code)", topic: registration.deviceTopic, at: at) {
                logger.info(
                    "device.advert.undecodable",
                    metadata: ["device.name": "\(registration.deviceTopic)", "error": "\(error)"])
            }
            return
        }
        // A new packet (its data changed) whose encryption counter does not advance is a replay.
        if let counter = decoded.encryptionCounter,
            !encryptionCounters.accept(packetID: counter, from: registration.address, at: now)
        {
            // Made when first needed: the metrics show a reason only once it happened.
            Counter(label: "gattway.central.adverts_undecodable", dimensions: [("reason", "replayed")]).increment()
            return
        }
        if let id = decoded.packetID, !device.packetIDs.accept(packetID: id, from: registration.address, at: now) {
            return
        }
        if !decoded.hasSameKinds(as: device.lastReportedMeasurements) {
            device.lastReportedMeasurements = decoded
            device.stateLayout = StateDocumentLayout(of: decoded)
            actions.append(.measurementsDecoded(decoded))
        }
        decoded.writeState(into: &room.state, layout: device.stateLayout)
        publishState(&device, newest: &room.state, at: now, mayPublish: mayPublish, actions: &actions)
    }

    /// A new decoded state, written in `newest`: published when it differs from the last one published, now or,
    /// within `advert_min_interval` of the last publication, when that ends (the newest state wins). `newest` gets
    /// back room to write the next state into.
    private func publishState(
        _ device: inout Device, newest: inout [UInt8], at now: BridgeClock.Instant, mayPublish: Bool,
        actions: inout [FollowUp]
    ) {
        guard !newest.hasSameBytes(as: device.lastStatePayload) else {
            // Back to the state published last: one that waited is dropped.
            dropPendingState(&device)
            return
        }
        if let last = device.lastStatePublished, last.duration(to: now) < minimumInterval {
            swap(&newest, &device.pendingStatePayload)
            guard !device.stateFlushScheduled else { return }
            device.stateFlushScheduled = true
            actions.append(.flushState(after: minimumInterval - last.duration(to: now)))
            return
        }
        dropPendingState(&device)
        device.lastStatePublished = now
        swap(&newest, &device.lastStatePayload)
        // In a fleet only the owner publishes; it publishes the last state when it starts owning.
        guard mayPublish else { return }
        outbox.send(
            MQTTMessage(
                topic: device.registration.stateTopic, payload: device.lastStatePayload, qos: stateQoS, retain: true))
    }

    private func dropPendingState(_ device: inout Device) {
        if device.statePending { device.pendingStatePayload = [] }
    }
}
