package import BluetoothCore
package import BridgeCore
import DequeModule
package import Logging
package import MQTTCore
import Metrics
import ServiceLifecycle
import Synchronization

/// The central bridge: discovered peripherals and their characteristics as MQTT topics.
///
/// One actor owns all state (the central's object tree, the tracked devices, waiters); long operations run as
/// child tasks of `run()` and report back through actor methods. It talks to the Bluetooth stack only through the
/// `BLECentral` port and to the broker only through the `MQTTClient` port. Values do not pass through the actor:
/// notification channels are read and published on the MQTT client's loop, and StartNotify values go from the
/// central's value sink through the value relay and the outbox to the MQTT client's loop.
package actor CentralBridge: Service {
    typealias Job = @Sendable () async -> Void

    var configuration: BridgeConfiguration
    let central: any BLECentral
    let mqtt: any MQTTClient
    let logger: Logger
    var routes: CentralRoutes
    let store: CentralStateStore
    let adapterPath: String
    let metrics: CentralMetrics
    let outbox: Outbox
    let values: ValueRelay
    /// Advert and decoded-state publication of every tracked device (the passive advertisement hot path).
    let adverts: AdvertPublisher

    var tree: BLEObjectTree
    var devices: [String: TrackedDevice] = [:]
    /// Who holds a tracking slot: addressed devices always, matched ones while heard (see `DeviceTracker`).
    var tracker: DeviceTracker<String, BridgeClock.Instant>
    var jobs: AsyncStream<Job>.Continuation?
    var waiters: [UInt64: DeviceWaiter] = [:]
    var nextWaiterID: UInt64 = 0
    var connectSlotsFree: Int
    var connectSlotWaiters: Deque<CheckedContinuation<Void, Never>> = []
    /// Waiting for every device's command worker to finish (shutdown).
    var commandWorkerWaiters: [DeviceWaiterSignal] = []
    var bluetoothdPresent = false
    var discovering = false
    var shuttingDown = false
    var subscribedFilters: Set<String> = []
    var devicesListDirty = false
    var devicesListFlushScheduled = false
    var requestsInFlight = 0
    /// `bridge/request/scan` windows open now, at most `maxScansInFlight`, none longer than 300 s.
    var scans = ScanSessions<BridgeClock.Instant>(maximum: CentralBridge.maxScansInFlight, longest: .seconds(300))
    var pairingInProgress = false
    /// When refused input is logged (it is always counted).
    var refusals = RefusalLog()
    /// Bindkeys by configured device index, read by the composition root; and the cipher they are used with.
    var bindkeys: [Int: Bindkey]
    let openAESCCM: AESCCMOpening?
    /// Where the bridge takes its time from: every timestamp, timeout and sleep.
    let clock: BridgeClock
    let started: BridgeClock.Instant
    /// Jobs of `run()` now running: a gauge that shows a leak of one task per event (say, per reconnect) at once.
    let runningJobs = Atomic<Int>(0)
    /// `gattway.central.jobs` in the metrics snapshots.
    let jobsGauge = Gauge(label: "gattway.central.jobs")
    /// How many jobs (child tasks of `run()` besides its fixed consumers) are running now.
    package nonisolated var runningJobCount: Int { runningJobs.load(ordering: .relaxed) }

    let version: String
    var homeAssistant = HomeAssistantDiscoveryState()
    /// The fleet ownership protocol, when `mqtt.gateway_id` is set (see `CentralBridge+Fleet`).
    var fleet: FleetParticipation?
    var fleetSubscriptions: AsyncStream<FleetSubscriptionChange>.Continuation?
    /// Ticks of the fleet protocol's clock handled so far: tests driving a manual clock wait on it.
    let fleetTicks = Atomic<Int>(0)
    package nonisolated var fleetTickCount: Int { fleetTicks.load(ordering: .acquiring) }
    /// Devices owned in the fleet, for the health report; -1 without a fleet.
    let fleetOwned = Atomic<Int>(-1)
    package nonisolated var fleetOwnedDeviceCount: Int? {
        let owned = fleetOwned.load(ordering: .relaxed)
        return owned < 0 ? nil : owned
    }

    package init(
        configuration: BridgeConfiguration, central: any BLECentral, mqtt: any MQTTClient, version: String,
        bindkeys: [Int: Bindkey] = [:], openAESCCM: AESCCMOpening? = nil, clock: BridgeClock = .continuous,
        logger: Logger
    ) {
        self.clock = clock
        started = clock.now
        self.configuration = configuration
        self.bindkeys = bindkeys
        self.openAESCCM = openAESCCM
        self.version = version
        self.central = central
        self.mqtt = mqtt
        self.logger = logger
        routes = CentralRoutes(configuration: configuration)
        store = CentralStateStore(directory: configuration.stateDirectory, logger: logger)
        adapterPath = "/org/bluez/" + configuration.bluetooth.adapter
        tree = BLEObjectTree(maxDevices: configuration.bluetooth.maxTrackedDevices)
        tracker = DeviceTracker(
            matchedCapacity: configuration.bluetooth.maxTrackedDevices,
            unheardTimeout: configuration.bluetooth.unheardTimeout, evictableAfter: Self.matchedSlotMinimumSilence)
        connectSlotsFree = configuration.bluetooth.maxConcurrentConnects
        metrics = CentralMetrics()
        outbox = Outbox(mqtt: mqtt, logger: logger, clock: clock)
        values = ValueRelay(outbox: outbox, store: store, metrics: metrics, logger: logger)
        adverts = AdvertPublisher(
            outbox: outbox, clock: clock, started: started,
            minimumInterval: configuration.bluetooth.advertMinInterval,
            stateQoS: routes.qos, openAESCCM: openAESCCM, logger: logger)
        homeAssistant.discovery = HomeAssistantDiscovery(configuration: configuration, version: version)
        if let gateway = configuration.mqtt.gatewayID {
            fleet = FleetParticipation(
                gateway: gateway, base: configuration.mqtt.baseTopic, settings: configuration.fleet)
            fleetOwned.store(0, ordering: .relaxed)
        }
        for device in configuration.devices {
            if case .address(let address) = device.selector {
                tree.pinnedDevices.insert(adapterPath + "/" + address.bluezPathComponent)
            }
        }
    }

    package func run() async throws {
        store.load()
        let (jobStream, jobContinuation) = AsyncStream.makeStream(of: Job.self)
        jobs = jobContinuation
        let (shutdownSignal, shutdownContinuation) = AsyncStream.makeStream(of: Void.self)
        // Unbounded, yet never long: the machine asks for at most one subscribe and one unsubscribe per tracked
        // device and minute, and the task below takes them as fast as the client acknowledges.
        let (fleetChanges, fleetChangesContinuation) = AsyncStream.makeStream(of: FleetSubscriptionChange.self)
        fleetSubscriptions = fleetChangesContinuation
        try await withTaskCancellationHandler {
            try await withGracefulShutdownHandler {
                try await withThrowingDiscardingTaskGroup { group in
                    group.addTask { try await self.consumeBlueZEvents() }
                    group.addTask { await self.consumeMQTTMessages() }
                    group.addTask { await self.consumeConnectionEvents() }
                    group.addTask { await self.saveStatePeriodically() }
                    if fleet != nil {
                        group.addTask { await self.runFleetClock() }
                        group.addTask { await self.runFleetSubscriptions(fleetChanges) }
                    }
                    group.addTask {
                        for await _ in shutdownSignal {}
                        await self.shutDown()
                        // Every command taken in gets its answer before the outbox is closed.
                        await self.commandWorkersFinished()
                        await self.outbox.drain(timeout: .seconds(5))
                        self.outbox.finish()
                        fleetChangesContinuation.finish()
                        jobContinuation.finish()
                    }
                    for await job in jobStream {
                        group.addTask {
                            self.jobsGauge.record(self.runningJobs.add(1, ordering: .relaxed).newValue)
                            defer { self.jobsGauge.record(self.runningJobs.subtract(1, ordering: .relaxed).newValue) }
                            await job()
                        }
                    }
                    group.cancelAll()
                }
            } onGracefulShutdown: {
                shutdownContinuation.finish()
            }
        } onCancel: {
            self.outbox.finish()
            fleetChangesContinuation.finish()
            jobContinuation.finish()
            shutdownContinuation.finish()
        }
        store.save()
    }

    /// Why the central bridge stopped running.
    package struct CentralBridgeError: Error, CustomStringConvertible {
        package let message: String
        package var description: String { message }
    }

    /// Runs `job` as a child task of `run()`.
    func spawn(_ job: @escaping Job) {
        jobs?.yield(job)
    }

    /// Jobs one device's task may have waiting to start; its work is a handful of long jobs (link loop, command
    /// worker, timers), so reaching this means a fault, which is counted and logged.
    static let deviceInboxLimit = 64

    /// Runs `job` as a child of the device's own task; nothing happens when the device is no longer tracked.
    func spawn(forDevice path: String, _ job: @escaping Job) {
        guard let inbox = devices[path]?.inbox else { return }
        if case .dropped = inbox.yield(job) {
            Counter(label: "gattway.central.device_jobs_dropped").increment()
            logger.error("device.inbox.full", metadata: ["device.name": "\(devices[path]?.topic ?? path)"])
        }
    }

    /// One tracked device's task: runs the jobs of its inbox as its children until the device is let go (the inbox
    /// finishes), then cancels what is still running.
    nonisolated func runDevice(inbox: AsyncStream<Job>) async {
        await withDiscardingTaskGroup { group in
            for await job in inbox {
                group.addTask {
                    self.jobsGauge.record(self.runningJobs.add(1, ordering: .relaxed).newValue)
                    defer { self.jobsGauge.record(self.runningJobs.subtract(1, ordering: .relaxed).newValue) }
                    await job()
                }
            }
            group.cancelAll()
        }
    }

    // MARK: - Inputs

    /// Follows bluetoothd until the task ends. The stream ending by itself means the system bus connection is
    /// gone: that is fatal for this process (a supervisor such as systemd restarts it), since every BlueZ object,
    /// session and subscription died with the connection.
    private func consumeBlueZEvents() async throws {
        let values = self.values
        // The StartNotify hot path; the tap lasts as long as the connection, which ends with the process.
        try await central.setValueSink { path, value in
            values.relay(value, ofCharacteristic: path)
        }
        // The passive advertisement hot path (see `AdvertPublisher`): only what the actor must do comes here.
        let adverts = self.adverts
        let jobs = self.jobs
        let toActor: @Sendable (String, [AdvertPublisher.FollowUp]) -> Void = { path, followUps in
            jobs?.yield { await self.perform(followUps, ofDevice: path) }
        }
        let sinkTimer = try await central.setAdvertSink { path, properties in
            adverts.takeReport(path, properties, followUps: toActor)
        }
        if let sinkTimer { adverts.deferFlushes(on: sinkTimer, toActor: toActor) }
        await central.paceAdverts(every: Self.advertPacing(configuration))
        for await event in central.events() {
            handle(event)
        }
        guard Task.isCancelled || shuttingDown else {
            throw CentralBridgeError(message: "the connection to the system bus was lost")
        }
    }

    private func consumeMQTTMessages() async {
        for await message in mqtt.messages {
            await handleCommandMessage(message)
        }
    }

    private func consumeConnectionEvents() async {
        for await event in mqtt.connectionEvents {
            switch event {
            case .connected: await brokerConnected()
            case .disconnected: fleetBrokerDisconnected()
            }
        }
    }

    private func saveStatePeriodically() async {
        while !Task.isCancelled {
            try? await clock.sleep(for: .seconds(2))
            store.saveIfDirty()
            await releaseUnheardDevices()
        }
    }

    func handle(_ event: BLECentralEvent) {
        // What the advert path took before this event happened first.
        syncAdverts()
        switch event {
        case .snapshot:
            bluetoothdPresent = true
            discovering = false
        case .serviceLost:
            if bluetoothdPresent { logger.warning("bluez.lost") }
            bluetoothdPresent = false
            discovering = false
        default:
            break
        }
        let changes = tree.apply(event)
        if case .snapshot = event {
            logger.notice("bluez.present", metadata: ["devices": "\(tree.devices.count)"])
            spawn { await self.ensureDiscovery() }
        }
        for change in changes { apply(change) }
    }

    private func apply(_ change: BLEObjectTree.Change) {
        switch change {
        case .adapterChanged(let path) where path == adapterPath:
            if let adapter = tree.adapters[path], !adapter.powered { discovering = false }
            spawn { await self.ensureDiscovery() }
        case .adapterChanged, .adapterRemoved, .characteristicAppeared, .characteristicRemoved:
            break
        case .deviceAppeared(let path):
            deviceSeen(path)
            checkWaiters(path)
        case .deviceAdvertChanged(let path):
            if devices[path] != nil {
                devices[path]?.lastHeard = clock.now
                _ = tracker.heard(path, byAddress: false, at: clock.now)
                advertChanged(path)
            } else {
                deviceSeen(path)
            }
        case .deviceConnectionChanged(let path):
            checkWaiters(path)
            // Who takes its advertisement reports depends on the link (see `registerAdverts`).
            registerAdverts(path)
            if let device = devices[path], !(tree.devices[path]?.connected ?? false), device.online {
                linkLost(path)
            }
        case .deviceRemoved(let path, _):
            checkWaiters(path)
            if let device = devices[path], device.online { linkLost(path) }
        case .characteristicValue(let path, let value):
            characteristicValueChanged(path, value)
        }
    }

    /// A matched device silent this long gives up its tracking slot to a newcomer when every slot is taken.
    static let matchedSlotMinimumSilence: Duration = .seconds(60)

    /// A device appeared or changed: track it when it matches a configured device.
    ///
    /// Devices configured by address always get a slot; devices found by a `match:` rule share
    /// `max_tracked_devices` slots, and when those are full a newcomer takes the slot of the one silent longest
    /// (at least `matchedSlotMinimumSilence`, and not connected), so advertisers faking a match cannot keep them all.
    func deviceSeen(_ path: String) {
        // Only what the configured adapter hears: another adapter of the host (or of a simulated bluetoothd shared
        // by a fleet) is not this gateway's radio.
        guard devices[path] == nil, let state = tree.devices[path], state.adapterPath == adapterPath,
            let address = state.address,
            let index = DeviceMatcher.configuredIndex(of: state, in: configuration.devices)
        else { return }
        let configured = configuration.devices[index]
        let byAddress = if case .address = configured.selector { true } else { false }
        let admission = tracker.heard(path, byAddress: byAddress, at: clock.now) { [devices, tree] candidate in
            !(devices[candidate]?.online ?? false) && !(tree.devices[candidate]?.connected ?? false)
                && (devices[candidate]?.commands.isIdle ?? true)
        }
        switch admission {
        case .refused:
            Counter(label: "gattway.central.tracking_refused").increment()
            return
        case .trackedEvicting(let evicted):
            spawn { await self.release(evicted, because: "gave its slot to a newer matching device") }
        case .tracked, .alreadyTracked:
            break
        }
        let topic = deviceTopic(for: index, address: address)
        var device = TrackedDevice(
            path: path, address: address, configIndex: index, topic: topic,
            routes: routes.routes(ofDevice: index, deviceTopic: topic), policy: configured.connect)
        device.lastActivity = clock.now
        device.lastHeard = clock.now
        device.commands = DeviceCommandQueue(
            capacity: Self.maxQueuedCommandsPerDevice, commandTimeout: Self.commandDeadline(configuration.bluetooth))
        // Bounded: see `deviceInboxLimit`.
        let (inbox, inboxContinuation) = AsyncStream.makeStream(
            of: Job.self, bufferingPolicy: .bufferingOldest(Self.deviceInboxLimit))
        device.inbox = inboxContinuation
        devices[path] = device
        registerAdverts(path)
        spawn { await self.runDevice(inbox: inbox) }
        tree.pinnedDevices.insert(path)
        store.remember(address: address, topic: topic)
        homeAssistantDeviceTracked(path)
        logger.notice("device.tracked", metadata: ["device.name": "\(topic)", "device.address": "\(address)"])
        markDevicesListDirty()
        spawn { await self.subscribeCommands(of: path) }
        advertChanged(path)
        fleetDeviceTracked(path)
        if case .always = configured.connect { startLink(path) }
        // A passive device is available while BlueZ keeps hearing it.
        if case .never = configured.connect { publishAvailability(path, online: true) }
    }

    /// The device topic for a device matched to configured device `index`: the friendly name for the first (or the
    /// one remembered across restarts), `<name>_<address>` for further devices matching the same entry.
    /// A configured name always wins; a remembered topic is used only when valid and free (`DeviceTopicAssignment`).
    private func deviceTopic(for index: Int, address: BluetoothAddress) -> String {
        let configured = configuration.devices[index]
        let selectsByAddress = if case .address = configured.selector { true } else { false }
        let assignment = DeviceTopicAssignment(configuredNames: Set(configuration.devices.compactMap(\.topicName)))
        return assignment.topic(
            configuredName: configured.topicName, selectsByAddress: selectsByAddress, addressName: address.topicName,
            remembered: store.topic(of: address)
        ) { topic in
            devices.values.contains { $0.topic == topic && $0.address != address }
                || store.isTopicTaken(topic, byOtherThan: address)
        }
    }

    /// The broker (re)connected: announce the bridge and every device's availability again, since the broker
    /// published our Last Will when the link dropped.
    private func brokerConnected() async {
        outbox.send(MQTTMessage(topic: routes.bridge.bridgeState, text: "online", qos: .atLeastOnce, retain: true))
        outbox.send(
            MQTTMessage(topic: routes.bridge.bridgeInfo, payload: bridgeInfoPayload(), qos: .atLeastOnce, retain: true))
        // Every verb, so that an unknown one gets an error answer instead of silence.
        let filter = routes.bridge.bridgeRequestFilter
        if subscribedFilters.insert(filter).inserted {
            do { try await mqtt.subscribe(filter, qos: .atLeastOnce, options: .commands) } catch {
                logger.warning("mqtt.subscribe.failed", metadata: ["mqtt.topic": "\(filter)", "error": "\(error)"])
            }
        }
        for (path, device) in devices { publishAvailability(path, online: device.online, force: true) }
        markDevicesListDirty()
        fleetBrokerConnected()
        await homeAssistantBrokerConnected()
    }
}
