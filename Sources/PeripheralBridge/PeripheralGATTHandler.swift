import BlueZ
import BridgeCore
import DBus
import Glibc
import Logging
import MQTTCore
import Synchronization

/// Answers bluetoothd's calls into the local characteristics: reads from the current value, writes to MQTT,
/// and notification sessions of both kinds.
final class PeripheralGATTHandler: GATTServerHandler {
    let channels: [CharacteristicChannel]
    let mqtt: any MQTTClient
    let qos: MQTTQoS
    let logger: Logger
    private let assemblers: [WriteAssembler]
    private let export = Mutex<GATTApplicationExport?>(nil)
    private let nextSubscriberID = Atomic<Int>(1)
    /// The StartNotify session of each characteristic, when one is open.
    private let signalSessions = Mutex<[Int: Int]>([:])
    /// Called when the set of centrals holding a notification socket changes.
    let onSubscribersChanged: @Sendable () -> Void
    /// Object paths of the centrals that made a request (reads, writes and notification sockets carry the device),
    /// kept until bluetoothd reports them disconnected (`forgetCentral`).
    private let centrals = Mutex<Set<String>>([])

    init(
        channels: [CharacteristicChannel], mqtt: any MQTTClient, qos: MQTTQoS, logger: Logger,
        onSubscribersChanged: @escaping @Sendable () -> Void
    ) {
        self.channels = channels
        self.mqtt = mqtt
        self.qos = qos
        self.logger = logger
        self.onSubscribersChanged = onSubscribersChanged
        assemblers = channels.map { WriteAssembler(maximumLength: $0.configuration.maxLength) }
    }

    func attach(_ export: GATTApplicationExport) { self.export.withLock { $0 = export } }

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
        let maximum = channel.configuration.maxLength
        if options.prepareAuthorize {
            // First pass of a prepared write to an `authorize` characteristic: judge the piece, apply nothing.
            guard options.offset + value.count <= maximum else {
                throw GATTServerError.invalidValueLength(options.offset + value.count, maximum: maximum)
            }
            return
        }
        let key = WriteAssembler.Key(device: options.device ?? "", characteristic: characteristic)
        let outcome: WriteAssembler.Outcome
        do {
            outcome = try assemblers[characteristic].add(value, offset: options.offset, mtu: options.mtu, key: key)
        } catch .tooLong(let length) {
            throw GATTServerError.invalidValueLength(length, maximum: maximum)
        } catch .invalidOffset(let offset) {
            throw GATTServerError.invalidOffset(offset, 0)
        }
        switch outcome {
        case .complete(let bytes):
            // The last piece of a long write completes it: the bytes published are the whole value, from offset 0.
            var whole = options
            whole.offset = 0
            try await publishWrite(bytes, channel: channel, options: whole)
        case .pending(let generation):
            let assembler = assemblers[characteristic]
            Task {
                try? await Task.sleep(for: WriteAssembler.settleTime)
                if let bytes = assembler.finishIfSettled(key: key, generation: generation) {
                    var whole = options
                    whole.offset = 0
                    try? await self.publishWrite(bytes, channel: channel, options: whole)
                }
            }
        }
    }

    private func publishWrite(_ bytes: [UInt8], channel: CharacteristicChannel, options: GATTRequestOptions) async throws {
        guard let topic = channel.configuration.sinkTopic else {
            throw DBusError(name: BlueZName.Error.notPermitted, message: "\(channel.name) has no sink_topic")
        }
        let payload: [UInt8]
        do {
            payload = try channel.configuration.codec.decode(bytes)
        } catch {
            logger.notice("peripheral.write.undecodable", metadata: ["characteristic": "\(channel.name)", "error": "\(error)"])
            throw GATTServerError.application(0x80, "the value does not fit the \(channel.configuration.codec) codec: \(error)")
        }
        var properties = MQTTProperties()
        properties.userProperties = [("device", options.deviceAddress ?? "unknown"), ("offset", String(options.offset))]
        do {
            try await mqtt.publish(MQTTMessage(topic: topic, payload: payload, qos: qos, properties: properties))
        } catch {
            logger.warning("peripheral.write.publish_failed", metadata: ["topic": "\(topic)", "error": "\(error)"])
            throw GATTServerError.application(0x80, "publishing to \(topic) failed: \(error)")
        }
    }

    func startNotify(characteristic: Int) async throws {
        guard let export = export.withLock({ $0 }) else {
            throw DBusError(name: BlueZName.Error.notReady, message: "the application is not exported yet")
        }
        let channel = channels[characteristic]
        let id = nextSubscriberID.wrappingAdd(1, ordering: .relaxed).oldValue
        let opened = signalSessions.withLock { sessions -> Bool in
            guard sessions[characteristic] == nil else { return false }
            sessions[characteristic] = id
            return true
        }
        guard opened else { return }  // bluetoothd calls StartNotify on each CCC enable; one session serves all
        channel.add(SignalSubscriber(
            id: id, characteristic: characteristic, export: export, indicate: channel.indicates,
            capacity: channel.configuration.queueDepth, policy: channel.configuration.whenFull,
            onRoom: { [weak channel] in channel?.roomAvailable() }))
        await export.setCharacteristicProperty(characteristic: characteristic, name: "Notifying", value: .bool(true))
        logger.info("peripheral.notify.started", metadata: ["characteristic": "\(channel.name)"])
    }

    func stopNotify(characteristic: Int) async {
        guard let id = signalSessions.withLock({ $0.removeValue(forKey: characteristic) }) else { return }
        channels[characteristic].remove(subscriber: id)
        await export.withLock({ $0 })?.setCharacteristicProperty(
            characteristic: characteristic, name: "Notifying", value: .bool(false))
    }

    func acquireNotify(characteristic: Int, options: GATTRequestOptions) async throws -> (fd: Int32, mtu: UInt16) {
        noteCentral(options)
        let channel = channels[characteristic]
        let pair: SeqPacketSocketPair
        do {
            pair = try SeqPacketSocketPair()
        } catch {
            throw DBusError(name: BlueZName.Error.failed, message: "\(error)")
        }
        let id = nextSubscriberID.wrappingAdd(1, ordering: .relaxed).oldValue
        let onSubscribersChanged = self.onSubscribersChanged
        let logger = self.logger
        let name = channel.name
        channel.add(SocketSubscriber(
            id: id, fd: pair.local, mtu: options.mtu, device: options.device, indicate: channel.indicates,
            capacity: channel.configuration.queueDepth, policy: channel.configuration.whenFull,
            onRoom: { [weak channel] in channel?.roomAvailable() },
            onClose: { [weak channel] id in
                // bluetoothd closed its end (CCC disabled or the central left).
                logger.info("peripheral.notify.released", metadata: ["characteristic": "\(name)"])
                if let channel, channel.subscriber(id) != nil { channel.remove(subscriber: id) }
                onSubscribersChanged()
            }))
        logger.info("peripheral.notify.acquired", metadata: [
            "characteristic": "\(name)", "device": "\(options.device ?? "?")", "mtu": "\(options.mtu)",
        ])
        onSubscribersChanged()
        return (pair.remote, UInt16(clamping: options.mtu))
    }

    func confirm(characteristic: Int) async {
        channels[characteristic].confirmAll()
    }

    /// Centrals known to be connected: those that made a request and have not been seen to disconnect, and those
    /// holding a notification socket. (A central that connects and asks nothing of the application is not known
    /// to it: BlueZ tells an application only the device of a request.)
    var connectedCentrals: Set<String> {
        let holders = channels.flatMap { $0.subscribers.compactMap { $0.isClosed ? nil : $0.device } }
        return centrals.withLock { $0 }.union(holders)
    }

    /// Centrals that made a request, to be checked for still being connected.
    var requestingCentrals: Set<String> { centrals.withLock { $0 } }

    func forgetCentral(_ device: String) {
        _ = centrals.withLock { $0.remove(device) }
    }

    private func noteCentral(_ options: GATTRequestOptions) {
        guard let device = options.device else { return }
        if centrals.withLock({ $0.insert(device).inserted }) { onSubscribersChanged() }
    }

    /// bluetoothd went away: every session it held is gone.
    func closeAllSessions() {
        centrals.withLock { $0.removeAll() }
        signalSessions.withLock { $0.removeAll() }
        for channel in channels { channel.closeAll() }
    }
}
