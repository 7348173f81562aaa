import BluetoothCore
import BridgeCore
import Logging
import MQTTCore
import Synchronization

/// Answers the stack's calls into the local characteristics: reads from the current value, writes to MQTT, and
/// notification sessions of both kinds, each a ``NotifySubscriber`` handed to the bridge to run in its task group.
final class PeripheralGATTHandler: GATTServerHandler {
    let channels: [CharacteristicChannel]
    let mqtt: any MQTTClient
    let qos: MQTTQoS
    let logger: Logger
    let clock: BridgeClock
    let limits: NotifySubscriber.Machine.Limits
    private let server: any GATTServer
    private let assemblers: Mutex<[WriteAssembler]>
    private let nextSubscriberID = Atomic<Int>(1)
    /// The StartNotify session of each characteristic, when one is open.
    private let signalSessions = Mutex<[Int: NotifySubscriber]>([:])
    /// Where new subscribers go to be run (the bridge's task group), and where changes of the centrals are told.
    private let spawn: @Sendable (NotifySubscriber) -> Void
    private let onCentralsChanged: @Sendable () -> Void
    /// Object paths of the centrals that made a request (reads, writes and notification links carry the device),
    /// kept until the stack reports them disconnected (`forgetCentral`).
    private let centrals = Mutex<Set<String>>([])

    init(
        channels: [CharacteristicChannel], server: any GATTServer, mqtt: any MQTTClient, qos: MQTTQoS,
        clock: BridgeClock, limits: NotifySubscriber.Machine.Limits, logger: Logger,
        spawn: @escaping @Sendable (NotifySubscriber) -> Void, onCentralsChanged: @escaping @Sendable () -> Void
    ) {
        self.channels = channels
        self.server = server
        self.mqtt = mqtt
        self.qos = qos
        self.clock = clock
        self.limits = limits
        self.logger = logger
        self.spawn = spawn
        self.onCentralsChanged = onCentralsChanged
        assemblers = Mutex(channels.map { WriteAssembler(maximumLength: $0.configuration.maxLength) })
    }

    func currentValue(characteristic: Int) -> [UInt8] { channels[characteristic].value }

    func readValue(characteristic: Int, options: GATTRequestOptions) async throws -> [UInt8] {
        noteCentral(options)
        let value = channels[characteristic].value
        guard options.offset <= value.count else { throw GATTServerError.invalidOffset(options.offset, value.count) }
        return Array(value[options.offset...])
    }

    func writeValue(characteristic: Int, value: [UInt8], options: GATTRequestOptions) async throws {
        noteCentral(options)
        let channel = channels[characteristic]
        let action = assemblers.withLock {
            $0[characteristic].writeArrived(
                value, offset: options.offset, prepareAuthorize: options.prepareAuthorize, device: options.device)
        }
        switch action {
        case .authorized:
            return
        case .reject(.tooLong(let length)):
            throw GATTServerError.invalidValueLength(length, maximum: channel.configuration.maxLength)
        case .reject(.invalidOffset(let offset, let length)):
            throw GATTServerError.invalidOffset(offset, length)
        case .publish(let bytes):
            try await publishWrite(bytes, channel: channel, options: options)
        }
    }

    /// Publishes a whole value a central wrote (the bytes are the value from offset 0).
    private func publishWrite(_ bytes: [UInt8], channel: CharacteristicChannel, options: GATTRequestOptions)
        async throws
    {
        guard let topic = channel.configuration.sinkTopic else {
            throw BlueZError(.notPermitted, "\(channel.name) has no sink_topic")
        }
        let payload: [UInt8]
        do {
            payload = try channel.configuration.codec.decode(bytes)
        } catch {
            logger.notice(
                "peripheral.write.undecodable", metadata: ["characteristic": "\(channel.name)", "error": "\(error)"])
            throw GATTServerError.application(
                0x80, "the value does not fit the \(channel.configuration.codec) codec: \(error)")
        }
        var properties = MQTTProperties()
        properties.userProperties = [("device", options.deviceAddress ?? "unknown"), ("offset", "0")]
        do {
            try await mqtt.publish(MQTTMessage(topic: topic, payload: payload, qos: qos, properties: properties))
        } catch {
            logger.warning("peripheral.write.publish_failed", metadata: ["topic": "\(topic)", "error": "\(error)"])
            throw GATTServerError.application(0x80, "publishing to \(topic) failed: \(error)")
        }
    }

    func startNotify(characteristic: Int) async throws {
        let channel = channels[characteristic]
        let subscriber = makeSubscriber(channel: channel, outlet: .startNotify(server, characteristic: characteristic))
        let opened = signalSessions.withLock { sessions -> Bool in
            guard sessions[characteristic] == nil else { return false }
            sessions[characteristic] = subscriber
            return true
        }
        guard opened else { return }  // bluetoothd calls StartNotify on each CCC enable; one session serves all
        channel.add(subscriber)
        spawn(subscriber)
        await server.setNotifying(characteristic: characteristic, true)
        logger.info("peripheral.notify.started", metadata: ["characteristic": "\(channel.name)"])
    }

    func stopNotify(characteristic: Int) async {
        guard let subscriber = signalSessions.withLock({ $0.removeValue(forKey: characteristic) }) else { return }
        subscriber.close()
        await server.setNotifying(characteristic: characteristic, false)
    }

    func acquireNotify(characteristic: Int, options: GATTRequestOptions, link: any GATTNotificationLink) async throws {
        noteCentral(options)
        let channel = channels[characteristic]
        let subscriber = makeSubscriber(channel: channel, outlet: .link(link))
        channel.add(subscriber)
        spawn(subscriber)
        logger.info(
            "peripheral.notify.acquired",
            metadata: [
                "characteristic": "\(channel.name)", "device": "\(options.device ?? "?")", "mtu": "\(options.mtu)",
            ])
        onCentralsChanged()
    }

    private func makeSubscriber(channel: CharacteristicChannel, outlet: NotifySubscriber.Outlet) -> NotifySubscriber {
        let id = nextSubscriberID.wrappingAdd(1, ordering: .relaxed).oldValue
        let machine = NotifySubscriber.Machine(
            indicates: channel.indicates, capacity: channel.configuration.queueDepth,
            policy: channel.configuration.whenFull, limits: limits)
        let onCentralsChanged = self.onCentralsChanged
        let server = self.server
        return NotifySubscriber(
            id: id, outlet: outlet, characteristicName: channel.name, machine: machine, clock: clock, logger: logger,
            // The channel strongly (it is retained with every value, and a weak reference would make each retain take
            // the runtime's slow path): the subscriber lets these go when it ends and the channel retires it.
            onRoom: { [channel] in channel.roomAvailable() },
            onEnd: { [channel, weak self] subscriber in
                channel.retire(subscriber)
                if case .startNotify(_, let characteristic) = subscriber.outlet {
                    // A session that ended by itself (dropped) is no longer open: the next StartNotify opens another.
                    let wasOpen =
                        self?.signalSessions.withLock { sessions -> Bool in
                            guard sessions[characteristic]?.id == subscriber.id else { return false }
                            sessions[characteristic] = nil
                            return true
                        } ?? false
                    if wasOpen { await server.setNotifying(characteristic: characteristic, false) }
                }
                onCentralsChanged()
            })
    }

    /// Confirm() comes for the StartNotify session only: a central's socket carries its own confirmations.
    func confirm(characteristic: Int) async {
        signalSessions.withLock { $0[characteristic] }?.confirmed()
    }

    /// Centrals known to be connected: those that made a request and have not been seen to disconnect, and those
    /// holding a notification link. (A central that connects and asks nothing of the application is not known to
    /// it: BlueZ tells an application only the device of a request.)
    var connectedCentrals: Set<String> {
        let holders = channels.flatMap { $0.subscribers.compactMap { $0.isClosed ? nil : $0.device } }
        return centrals.withLock { $0 }.union(holders)
    }

    func forgetCentral(_ device: String) {
        _ = centrals.withLock { $0.remove(device) }
        assemblers.withLock { assemblers in
            for index in assemblers.indices { assemblers[index].centralDisconnected(device) }
        }
    }

    private func noteCentral(_ options: GATTRequestOptions) {
        guard let device = options.device else { return }
        if centrals.withLock({ $0.insert(device).inserted }) { onCentralsChanged() }
    }

    /// The stack went away: every session it held is gone.
    func closeAllSessions() {
        centrals.withLock { $0.removeAll() }
        signalSessions.withLock { $0.removeAll() }
        for channel in channels { channel.closeAll() }
    }
}
