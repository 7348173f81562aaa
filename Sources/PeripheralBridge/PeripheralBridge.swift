package import BluetoothCore
package import BridgeCore
package import Logging
package import MQTTCore
import Metrics
import ServiceLifecycle

/// The local peripheral: a GATT application and an advertisement registered with the stack, fed from MQTT.
///
/// One actor owns the registration state; the hot path (MQTT message → channel → subscriber) does not pass through
/// it. When the MQTT client delivers on the loop the stack's values are sent from, a value for idle subscribers is
/// sent there in the turn that read it (``SourceFastPath``); everything else goes through the single consumer of
/// `messages` into the subscribers' queues. Every subscriber (a central's notification link, a StartNotify session)
/// runs in its own child task of the bridge's task group, which sends what waits, so a slow or silent central waits
/// only in its own task. It uses its own MQTT
/// connection, so a backpressure pause here never stalls the central bridge. It sees the stack only through the
/// `GATTServer` port and takes all its time from an injected clock.
package actor PeripheralBridge: Service {
    let configuration: PeripheralConfiguration
    let topics: TopicLayout
    let server: any GATTServer
    let mqtt: any MQTTClient
    let logger: Logger
    let clock: BridgeClock
    let channels: [CharacteristicChannel]
    let channelsBySource: [String: [CharacteristicChannel]]
    let handler: PeripheralGATTHandler
    let application: GATTLocalApplication
    let status: PeripheralStatusReporter
    let values: PeripheralValueStore
    /// Each channel's key in `values` (service/characteristic UUID), by channel id.
    let valueKeys: [String]
    /// The synchronous way of source values, when the MQTT client delivers on the loop the stack's values are sent
    /// from (nil otherwise: every message goes through the consumer).
    let fastPath: SourceFastPath?
    /// Subscribers to run and the shutdown request, for the task group's owner (``run()``).
    private let controls: AsyncStream<Control>
    private let controlSink: AsyncStream<Control>.Continuation
    /// What the stack and the handler report, taken in order by one child task.
    private let events: AsyncStream<PeripheralEvent>
    private let eventSink: AsyncStream<PeripheralEvent>.Continuation

    enum Control: Sendable {
        case run(NotifySubscriber)
        case shutDown
    }

    enum PeripheralEvent: Sendable {
        case server(GATTServerEvent)
        /// A central was first seen, or a notification session opened or ended.
        case centralsChanged
    }

    var bluetoothdPresent = false
    var applicationRegistered = false
    var advertisingWanted = true
    var advertisementRegistered = false
    /// Whether a call of `updateAdvertising` is changing the registration, and the calls that came meanwhile, which
    /// it answers once it has made the registration what they asked for.
    var advertisingChange: [CheckedContinuation<Void, Never>]?
    /// Rate limits for reports of refused source values and requests.
    /// When refused input is logged (it is always counted).
    var refusals = RefusalLog()
    let started: BridgeClock.Instant
    let payloadLimits: MQTTSettings.PayloadLimits
    let responseTopicRule: ResponseTopicRule

    package init(
        configuration: BridgeConfiguration, server: any GATTServer, mqtt: any MQTTClient, logger: Logger,
        clock: BridgeClock = .continuous
    ) {
        let peripheral = configuration.peripheral!
        self.configuration = peripheral
        topics = TopicLayout(configuration.mqtt)
        self.server = server
        self.mqtt = mqtt
        self.logger = logger
        self.clock = clock
        started = clock.now
        var channels: [CharacteristicChannel] = []
        var services: [GATTLocalApplication.Service] = []
        var valueKeys: [String] = []
        for service in peripheral.services {
            var characteristics: [GATTLocalApplication.Characteristic] = []
            for characteristic in service.characteristics {
                let name = characteristic.name ?? characteristic.uuid.description
                valueKeys.append(
                    PeripheralValueStore.key(
                        service: service.uuid.description, characteristic: characteristic.uuid.description))
                channels.append(CharacteristicChannel(id: channels.count, name: name, configuration: characteristic))
                characteristics.append(
                    GATTLocalApplication.Characteristic(
                        uuid: characteristic.uuid.description, flags: characteristic.flags.map(\.rawValue),
                        descriptors: characteristic.descriptors.map {
                            .init(uuid: $0.uuid.description, flags: $0.flags.map(\.rawValue), value: $0.value)
                        }))
            }
            services.append(
                .init(uuid: service.uuid.description, primary: service.primary, characteristics: characteristics))
        }
        self.channels = channels
        self.valueKeys = valueKeys
        application = GATTLocalApplication(services: services)
        let values = PeripheralValueStore(
            directory: configuration.stateDirectory, channelKeys: valueKeys, logger: logger)
        self.values = values
        var bySource: [String: [CharacteristicChannel]] = [:]
        for channel in channels {
            if let topic = channel.configuration.sourceTopic { bySource[topic, default: []].append(channel) }
        }
        channelsBySource = bySource
        payloadLimits = configuration.mqtt.payloadLimits
        responseTopicRule = ResponseTopicRule(
            baseTopic: configuration.mqtt.baseTopic,
            subscriptions: (Array(bySource.keys) + [topics.bridgeRequestFilter]).compactMap {
                try? MQTTTopicFilter($0)
            })
        if let loop = server.emitLoop, loop === mqtt.publishLoop {
            let fastPath = SourceFastPath(
                channelsBySource: bySource, sourceLimit: configuration.mqtt.payloadLimits.source, values: values)
            // Set before the client runs, so that every message passes the tap and the order it keeps is complete.
            mqtt.tapInbound { fastPath.take($0) }
            self.fastPath = fastPath
        } else {
            fastPath = nil
        }
        let qos = MQTTQoS(rawValue: UInt8(clamping: configuration.mqtt.qos)) ?? .atLeastOnce
        status = PeripheralStatusReporter(channels: channels, topic: topics.base + "/peripheral/status")
        (controls, controlSink) = AsyncStream.makeStream(of: Control.self)
        // Events only prompt a re-check of the centrals and the registration: under a burst the newest are enough.
        (events, eventSink) = AsyncStream.makeStream(of: PeripheralEvent.self, bufferingPolicy: .bufferingNewest(256))
        let controlSink = self.controlSink
        let eventSink = self.eventSink
        handler = PeripheralGATTHandler(
            channels: channels, server: server, mqtt: mqtt, qos: qos, clock: clock,
            limits: .init(stallLimit: peripheral.stallLimit), logger: logger,
            spawn: { subscriber in
                // After shutdown nobody runs it: it closes at once (its link with it).
                if case .terminated = controlSink.yield(.run(subscriber)) { subscriber.close() }
            },
            onCentralsChanged: { eventSink.yield(.centralsChanged) })
    }

    package func run() async throws {
        // Values from the last run first: a retained source message, arriving once subscribed, replaces them.
        let restored = values.load()
        for channel in channels {
            if let value = restored[valueKeys[channel.id]] { _ = channel.offerNow(value) }
        }
        let advert = configuration.advertisement
        let advertisement = GATTAdvertisement(
            localName: advert.localName, serviceUUIDs: advert.serviceUUIDs.map(\.description),
            manufacturerData: advert.manufacturerData,
            serviceData: advert.serviceData.map { ($0.uuid.description, $0.data) },
            discoverable: advert.discoverable, includes: advert.includes.map(\.rawValue),
            appearance: advert.appearance)
        try await server.export(application: application, advertisement: advertisement, handler: handler)
        let controlSink = self.controlSink
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await withTaskGroup(of: Void.self) { group in
                    group.addTask { await self.consumeMessages() }
                    group.addTask { await self.watchStack() }
                    group.addTask { await self.handleEvents() }
                    group.addTask { await self.subscribeOnEveryConnect() }
                    group.addTask { await self.reportStatus() }
                    group.addTask { await self.saveValuesPeriodically() }
                    // Each subscriber runs as a child here until it closes; on shutdown, unregister from the stack,
                    // then stop them all.
                    for await control in controls {
                        guard case .run(let subscriber) = control else { break }
                        group.addTask { await subscriber.run() }
                    }
                    controlSink.finish()
                    await self.shutDown()
                    group.cancelAll()
                }
            } onGracefulShutdown: {
                controlSink.yield(.shutDown)
            }
        } onCancel: {
            controlSink.yield(.shutDown)
        }
    }

    // MARK: - The stack

    /// Runs the port's watch until cancelled; its events are handled in order by ``handleEvents()``.
    private func watchStack() async {
        let eventSink = self.eventSink
        do {
            try await server.watch { eventSink.yield(.server($0)) }
        } catch {
            logger.error("peripheral.watch.failed", metadata: ["error": "\(error)"])
        }
    }

    private func handleEvents() async {
        for await event in events {
            switch event {
            case .server(.stackAppeared): await bluetoothdAppeared()
            case .server(.stackGone): bluetoothdGone()
            case .server(.advertisementReleased): advertisementReleased()
            case .server(.centralDisconnected(let device)):
                handler.forgetCentral(device)
                await updateAdvertising()
            case .centralsChanged:
                await updateAdvertising()
            }
        }
    }

    private func bluetoothdAppeared() async {
        bluetoothdPresent = true
        applicationRegistered = false
        advertisementRegistered = false
        // bluetoothd may still be exporting its adapters when its name appears: retry with backoff, bounded.
        var backoff = JitteredBackoff(initial: .milliseconds(100), maximum: .seconds(5))
        for attempt in 1...20 where bluetoothdPresent && !applicationRegistered && !Task.isCancelled {
            do {
                try await server.registerApplication(adapter: configuration.adapter)
                applicationRegistered = true
                logger.notice("peripheral.registered", metadata: ["adapter": "\(configuration.adapter)"])
            } catch {
                logger.warning("peripheral.register.failed", metadata: ["attempt": "\(attempt)", "error": "\(error)"])
                try? await clock.sleep(for: backoff.next())
            }
        }
        await updateAdvertising()
        status.markDirty()
    }

    private func bluetoothdGone() {
        guard bluetoothdPresent else { return }
        logger.warning("peripheral.bluez.lost")
        bluetoothdPresent = false
        applicationRegistered = false
        advertisementRegistered = false
        handler.closeAllSessions()
        status.markDirty()
    }

    private func shutDown() async {
        if advertisementRegistered { try? await server.unregisterAdvertisement(adapter: configuration.adapter) }
        if applicationRegistered { try? await server.unregisterApplication(adapter: configuration.adapter) }
        handler.closeAllSessions()
        values.saveIfDirty()
    }

    private func saveValuesPeriodically() async {
        while !Task.isCancelled {
            try? await clock.sleep(for: .seconds(2))
            values.saveIfDirty()
        }
    }

    // MARK: - MQTT

    private func subscribeOnEveryConnect() async {
        // Sources keep their retained value (it is the current one); the request topic never replays one.
        var filters = Array(channelsBySource.keys).map { ($0, MQTTSubscriptionOptions.values) }
        filters.append((topics.bridgeRequest("advertise"), .commands))
        for (filter, options) in filters {
            do {
                try await mqtt.subscribe(filter, qos: .atLeastOnce, options: options)
            } catch {
                logger.error("peripheral.subscribe.failed", metadata: ["filter": "\(filter)", "error": "\(error)"])
            }
        }
    }

    /// The single consumer of what the fast path leaves (of every message, without a fast path): a channel under
    /// backpressure suspends it, which pauses the MQTT socket reads.
    private func consumeMessages() async {
        for await message in mqtt.messages {
            if Task.isCancelled { return }
            await handle(message)
            fastPath?.consumerHandled()
        }
    }

    private func handle(_ message: MQTTMessage) async {
        if let channels = channelsBySource[message.topic] {
            let size = message.oversizePayloadLength ?? message.payload.count
            guard size <= payloadLimits.source else {
                refuseSource(
                    message, reason: "oversize", channel: nil,
                    "the payload has \(size) bytes; at most \(payloadLimits.source) are accepted")
                return
            }
            for channel in channels {
                let value: [UInt8]
                do {
                    value = try channel.configuration.codec.encode(payload: message.payload)
                } catch {
                    refuseSource(message, reason: "unencodable", channel: channel, "\(error)")
                    continue
                }
                // Never cut silently: a value the characteristic cannot hold is refused whole.
                let maximum = min(channel.configuration.maxLength, 512)
                guard value.count <= maximum else {
                    refuseSource(
                        message, reason: "too_long", channel: channel,
                        "the value has \(value.count) bytes; the characteristic holds at most \(maximum)")
                    continue
                }
                values.set(value, channel: channel.id)
                if !channel.offerNow(value) { await channel.deliver(value) }
            }
        } else if message.topic == topics.bridgeRequest("advertise") {
            guard await admitRequest(message) else { return }
            await handleAdvertiseRequest(message)
        }
    }

    private func handleAdvertiseRequest(_ message: MQTTMessage) async {
        var writer = JSONWriter()
        writer.beginObject()
        let request = try? JSONValue(parsing: message.payload)
        if let enabled = request?["enabled"], case .bool(let flag) = enabled {
            advertisingWanted = flag
            await updateAdvertising()
            writer.field("ok", true)
            writer.field("enabled", flag)
            writer.field("advertising", advertisementRegistered)
        } else {
            writer.field("ok", false)
            writer.field("error", "gattway.Error.InvalidPayload")
            writer.field("message", #"expected {"enabled": true|false}"#)
        }
        if let transaction = request?["transaction"] {
            writer.key("transaction")
            transaction.write(to: &writer)
        }
        writer.endObject()
        var reply = MQTTMessage(topic: topics.bridgeResponse("advertise"), payload: writer.bytes, qos: .atLeastOnce)
        if let responseTopic = message.properties.responseTopic {
            reply.properties.correlationData = message.properties.correlationData
            try? await mqtt.publish(
                MQTTMessage(
                    topic: responseTopic, payload: writer.bytes, qos: .atLeastOnce,
                    properties: reply.properties))
        }
        reply.properties = MQTTProperties()
        do { try await mqtt.publish(reply) } catch {
            logger.warning("peripheral.response.failed", metadata: ["error": "\(error)"])
        }
    }

    private func reportStatus() async {
        while !Task.isCancelled {
            try? await clock.sleep(for: .seconds(1))
            if let message = status.messageIfChanged() {
                try? await mqtt.publish(message)
            }
        }
    }
}
