import BlueZ
import BluetoothCore
import BridgeCore
import DBus
import DequeModule
import Logging
import MQTTCore
import Mosquitto
import ServiceLifecycle

/// The central bridge: discovered peripherals and their characteristics as MQTT topics.
///
/// One actor owns all state (BlueZ's object tree, the tracked devices, waiters); long operations run as child
/// tasks of `run()` and report back through actor methods. Values do not pass through the actor: notification
/// sockets are read and published on the MQTT client's queue, and StartNotify values go from the D-Bus
/// connection's queue (a signal tap) through the value relay and the outbox to the MQTT client's queue.
package actor CentralBridge: Service {
    typealias Job = @Sendable () async -> Void

    var configuration: BridgeConfiguration
    let bluez: BlueZClient
    let mqtt: MosquittoClient
    let logger: Logger
    var routes: CentralRoutes
    let store: CentralStateStore
    let adapterPath: String
    let metrics: CentralMetrics
    let outbox: Outbox
    let values: ValueRelay

    var tree: BlueZObjectTree
    var devices: [String: TrackedDevice] = [:]
    var jobs: AsyncStream<Job>.Continuation?
    var waiters: [UInt64: DeviceWaiter] = [:]
    var nextWaiterID: UInt64 = 0
    var connectSlotsFree: Int
    var connectSlotWaiters: Deque<CheckedContinuation<Void, Never>> = []
    var bluetoothdPresent = false
    var discovering = false
    var shuttingDown = false
    var subscribedFilters: Set<String> = []
    var devicesListDirty = false
    var devicesListFlushScheduled = false
    var requestsInFlight = 0
    var scansInFlight = 0
    var pairingInProgress = false
    /// When refused input is logged (it is always counted).
    var refusals = RefusalLog()
    /// Bindkeys by configured device index, read by the composition root; and the cipher they are used with.
    var bindkeys: [Int: Bindkey]
    let openAESCCM: AESCCMOpening?
    /// Repeats by packet id (8-bit in the formats that have one) and replays by encryption counter (32-bit).
    var packetIDs = PacketIDDeduplicator()
    var encryptionCounters = PacketIDDeduplicator(modulus: 1 << 32, window: 1 << 31, resetAfter: .seconds(1 << 40))
    let started = ContinuousClock.now

    let version: String
    var homeAssistant = HomeAssistantDiscoveryState()

    package init(
        configuration: BridgeConfiguration, bluez: BlueZClient, mqtt: MosquittoClient, version: String,
        bindkeys: [Int: Bindkey] = [:], openAESCCM: AESCCMOpening? = nil, logger: Logger
    ) {
        self.configuration = configuration
        self.bindkeys = bindkeys
        self.openAESCCM = openAESCCM
        self.version = version
        self.bluez = bluez
        self.mqtt = mqtt
        self.logger = logger
        routes = CentralRoutes(configuration: configuration)
        store = CentralStateStore(directory: configuration.stateDirectory, logger: logger)
        adapterPath = "/org/bluez/" + configuration.bluetooth.adapter
        tree = BlueZObjectTree(maxDevices: configuration.bluetooth.maxTrackedDevices)
        connectSlotsFree = configuration.bluetooth.maxConcurrentConnects
        metrics = CentralMetrics()
        outbox = Outbox(mqtt: mqtt, logger: logger)
        values = ValueRelay(outbox: outbox, store: store, metrics: metrics, logger: logger)
        homeAssistant.discovery = HomeAssistantDiscovery(configuration: configuration, version: version)
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
        try await withTaskCancellationHandler {
            try await withGracefulShutdownHandler {
                try await withThrowingDiscardingTaskGroup { group in
                    group.addTask { try await self.consumeBlueZEvents() }
                    group.addTask { await self.consumeMQTTMessages() }
                    group.addTask { await self.consumeConnectionEvents() }
                    group.addTask { await self.saveStatePeriodically() }
                    group.addTask {
                        for await _ in shutdownSignal {}
                        await self.shutDown()
                        await self.outbox.drain(timeout: .seconds(5))
                        self.outbox.finish()
                        jobContinuation.finish()
                    }
                    for await job in jobStream {
                        group.addTask { await job() }
                    }
                    group.cancelAll()
                }
            } onGracefulShutdown: {
                shutdownContinuation.finish()
            }
        } onCancel: {
            self.outbox.finish()
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

    // MARK: - Inputs

    /// Follows bluetoothd until the task ends. The stream ending by itself means the system bus connection is
    /// gone: that is fatal for this process (a supervisor such as systemd restarts it), since every BlueZ object,
    /// session and subscription died with the connection.
    private func consumeBlueZEvents() async throws {
        let values = self.values
        // The StartNotify hot path; the tap lasts as long as the connection, which ends with the process.
        _ = try await bluez.tapCharacteristicValues { path, value in
            values.relay(value, ofCharacteristic: path)
        }
        for await event in bluez.watch() {
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
            if case .connected = event { await brokerConnected() }
        }
    }

    private func saveStatePeriodically() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(2))
            store.saveIfDirty()
            await releaseUnheardDevices()
        }
    }

    func handle(_ event: BlueZClient.Event) {
        let changes: [BlueZObjectTree.Change]
        switch event {
        case .snapshot(let objects):
            bluetoothdPresent = true
            discovering = false
            changes = tree.replaceAll(with: objects)
            logger.notice("bluez.present", metadata: ["devices": "\(tree.devices.count)"])
            spawn { await self.ensureDiscovery() }
        case .serviceLost:
            if bluetoothdPresent { logger.warning("bluez.lost") }
            bluetoothdPresent = false
            discovering = false
            changes = tree.replaceAll(with: .array(elementSignature: "{oa{sa{sv}}}", []))
        case .interfacesAdded(let path, let interfaces):
            changes = tree.interfacesAdded(path: path, interfaces: interfaces)
        case .interfacesRemoved(let path, let interfaces):
            changes = tree.interfacesRemoved(path: path, interfaces: interfaces)
        case .propertiesChanged(let path, let interface, let changed, let invalidated):
            changes = tree.propertiesChanged(
                path: path, interface: interface, changed: changed, invalidated: invalidated)
        }
        for change in changes { apply(change) }
    }

    private func apply(_ change: BlueZObjectTree.Change) {
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
                devices[path]?.lastHeard = .now
                advertChanged(path)
            } else {
                deviceSeen(path)
            }
        case .deviceConnectionChanged(let path):
            checkWaiters(path)
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

    /// A device appeared or changed: track it when it matches a configured device.
    func deviceSeen(_ path: String) {
        guard devices[path] == nil, let state = tree.devices[path], let address = state.address,
            let index = DeviceMatcher.configuredIndex(of: state, in: configuration.devices),
            devices.count < configuration.bluetooth.maxTrackedDevices
        else { return }
        let configured = configuration.devices[index]
        let topic = deviceTopic(for: index, address: address)
        let device = TrackedDevice(
            path: path, address: address, configIndex: index, topic: topic,
            routes: routes.routes(ofDevice: index, deviceTopic: topic), policy: configured.connect)
        devices[path] = device
        tree.pinnedDevices.insert(path)
        store.remember(address: address, topic: topic)
        homeAssistantDeviceTracked(path)
        logger.notice("device.tracked", metadata: ["device.name": "\(topic)", "device.address": "\(address)"])
        markDevicesListDirty()
        spawn { await self.subscribeCommands(of: path) }
        advertChanged(path)
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

    /// Subscribes to the device's `/set` and `/get` topics.
    func subscribeCommands(of path: String) async {
        guard let device = devices[path] else { return }
        // `/get` only where reads are configured: no topic invites a read the configuration does not allow.
        let filters = device.routes.flatMap { route in
            route.characteristic.read ? [route.setTopic, route.getTopic] : [route.setTopic]
        }.filter { !subscribedFilters.contains($0) }
        for filter in filters {
            subscribedFilters.insert(filter)
            do {
                try await mqtt.subscribe(filter, qos: .atLeastOnce, options: .commands)
            } catch {
                // Remembered by the client: it is subscribed again on the next connect.
                logger.warning("mqtt.subscribe.failed", metadata: ["mqtt.topic": "\(filter)", "error": "\(error)"])
            }
        }
    }

    /// The broker (re)connected: announce the bridge and every device's availability again, since the broker
    /// published our Last Will when the link dropped.
    private func brokerConnected() async {
        outbox.send(MQTTMessage(topic: routes.bridge.bridgeState, text: "online", qos: .atLeastOnce, retain: true))
        outbox.send(MQTTMessage(topic: routes.bridge.bridgeInfo, payload: bridgeInfoPayload(), qos: .atLeastOnce, retain: true))
        // Every verb, so that an unknown one gets an error answer instead of silence.
        let filter = routes.bridge.bridgeRequestFilter
        if subscribedFilters.insert(filter).inserted {
            do { try await mqtt.subscribe(filter, qos: .atLeastOnce, options: .commands) } catch {
                logger.warning("mqtt.subscribe.failed", metadata: ["mqtt.topic": "\(filter)", "error": "\(error)"])
            }
        }
        for (path, device) in devices { publishAvailability(path, online: device.online, force: true) }
        markDevicesListDirty()
        await homeAssistantBrokerConnected()
    }

    /// `bridge/info`: what this gateway is and what it is configured to do.
    func bridgeInfoPayload() -> [UInt8] {
        var writer = JSONWriter(reservingCapacity: 256)
        writer.beginObject()
        writer.field("version", version)
        if let gateway = configuration.mqtt.gatewayID { writer.field("gateway_id", gateway) }
        writer.field("base_topic", configuration.mqtt.baseTopic)
        writer.field("adapter", configuration.bluetooth.adapter)
        writer.key("configured_devices")
        writer.beginArray()
        for device in configuration.devices { writer.value(device.topicName ?? "(match)") }
        writer.endArray()
        writer.field("peripheral", configuration.peripheral != nil)
        writer.endObject()
        return writer.bytes
    }

    // MARK: - Discovery

    /// Starts discovery with the configured filter when bluetoothd is there and the adapter is powered.
    func ensureDiscovery() async {
        guard bluetoothdPresent, !discovering, !shuttingDown else { return }
        guard let adapter = tree.adapters[adapterPath] else {
            logger.warning("bluez.adapter.missing", metadata: ["adapter": "\(configuration.bluetooth.adapter)"])
            return
        }
        guard adapter.powered else {
            logger.notice("bluez.adapter.off", metadata: ["adapter": "\(configuration.bluetooth.adapter)"])
            return
        }
        discovering = true
        let scan = configuration.bluetooth.scan
        let filter = BlueZDiscoveryFilter(
            uuids: scan.uuids.map(\.description), rssi: scan.rssi.map { Int16(clamping: $0) },
            pathloss: scan.pathloss.map { UInt16(clamping: $0) }, transport: scan.transport.rawValue,
            duplicateData: scan.duplicates, pattern: scan.pattern)
        do {
            try await bluez.setDiscoveryFilter(adapter: adapterPath, filter)
            try await bluez.startDiscovery(adapter: adapterPath)
            logger.info("bluez.discovery.started")
        } catch let error as DBusError where error.name == BlueZName.Error.inProgress {
            // Our session already runs (e.g. after a reconnect of ours, not of bluetoothd).
        } catch {
            discovering = false
            logger.warning("bluez.discovery.failed", metadata: ["error": "\(error)"])
        }
    }

    // MARK: - Waiting for device state

    struct DeviceWaiter {
        let path: String
        let condition: @Sendable (BlueZDeviceState?) -> Bool
        let signal: DeviceWaiterSignal
    }

    /// Waits until `condition` holds for the device at `path`, at most `timeout`.
    ///
    /// The timeout is a child task that ends with the wait, so a long one (a link waiting for its device to drop)
    /// leaves nothing behind; cancellation and shutdown end the wait at once.
    func waitForDevice(
        _ path: String, timeout: Duration, until condition: @escaping @Sendable (BlueZDeviceState?) -> Bool
    ) async throws {
        if condition(tree.devices[path]) { return }
        if shuttingDown { throw CancellationError() }
        nextWaiterID += 1
        let id = nextWaiterID
        let signal = DeviceWaiterSignal()
        waiters[id] = DeviceWaiter(path: path, condition: condition, signal: signal)
        defer { waiters[id] = nil }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await signal.wait() }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw CommandFailure.gattway("Timeout", "no answer within \(timeout)")
            }
            try await group.next()
            group.cancelAll()
        }
    }

    func checkWaiters(_ path: String) {
        let state = tree.devices[path]
        for waiter in waiters.values where waiter.path == path && waiter.condition(state) {
            waiter.signal.fire()
        }
    }

    // MARK: - Connect slots (BlueZ degrades under parallel connects)

    func acquireConnectSlot() async {
        if connectSlotsFree > 0 {
            connectSlotsFree -= 1
            return
        }
        await withCheckedContinuation { connectSlotWaiters.append($0) }
    }

    func releaseConnectSlot() {
        if let next = connectSlotWaiters.popFirst() { next.resume() } else { connectSlotsFree += 1 }
    }

    // MARK: - Shutdown

    /// SIGTERM: disconnect every device, publish it offline, save state.
    private func shutDown() async {
        shuttingDown = true
        logger.notice("bridge.stopping")
        // All at once, each bounded: a device that does not answer holds up no other, and the whole stop stays short.
        var connected: [(path: String, topic: String)] = []
        for (path, device) in devices where device.online || (tree.devices[path]?.connected ?? false) {
            closeSockets(path)
            devices[path]?.disconnectReason = "stopping"
            connected.append((path, device.topic))
        }
        let bluez = self.bluez
        let logger = self.logger
        await withTaskGroup(of: Void.self) { group in
            for (path, topic) in connected {
                group.addTask {
                    do { try await bluez.disconnect(device: path, timeout: .seconds(5)) } catch {
                        logger.info("device.disconnect.failed", metadata: ["device.name": "\(topic)", "error": "\(error)"])
                    }
                }
            }
        }
        for path in devices.keys { publishAvailability(path, online: false) }
        for waiter in waiters.values { waiter.signal.fail(CancellationError()) }
        if discovering { try? await bluez.stopDiscovery(adapter: adapterPath) }
        store.save()
    }
}
