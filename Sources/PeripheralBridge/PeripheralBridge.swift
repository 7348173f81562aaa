import BlueZ
package import BridgeCore
package import DBus
package import Logging
import Metrics
package import MQTTCore
import ServiceLifecycle
import BluetoothCore

/// The local peripheral: a GATT application and an advertisement registered with BlueZ, fed from MQTT.
///
/// One actor owns the registration state; the hot path (MQTT message → channel → notification socket) does not
/// pass through it. It uses its own MQTT connection, so a backpressure pause here never stalls the central bridge.
package actor PeripheralBridge: Service {
    let configuration: PeripheralConfiguration
    let topics: TopicLayout
    let bus: DBusConnection
    let mqtt: any MQTTClient
    let logger: Logger
    let adapterPath: String
    let channels: [CharacteristicChannel]
    let channelsBySource: [String: [CharacteristicChannel]]
    let handler: PeripheralGATTHandler
    let application: GATTApplicationExport
    var advertisement: LEAdvertisementExport!
    let status: PeripheralStatusReporter
    let values: PeripheralValueStore
    /// Each channel's key in `values` (service/characteristic UUID), by channel id.
    let valueKeys: [String]

    var bluetoothdPresent = false
    var applicationRegistered = false
    var advertisingWanted = true
    var advertisementRegistered = false
    /// Rate limits for reports of refused source values and requests.
    /// When refused input is logged (it is always counted).
    var refusals = RefusalLog()
    let started = ContinuousClock.now
    let payloadLimits: MQTTSettings.PayloadLimits
    let responseTopicRule: ResponseTopicRule

    package init(configuration: BridgeConfiguration, bus: DBusConnection, mqtt: any MQTTClient, logger: Logger) {
        let peripheral = configuration.peripheral!
        self.configuration = peripheral
        topics = TopicLayout(configuration.mqtt)
        self.bus = bus
        self.mqtt = mqtt
        self.logger = logger
        adapterPath = "/org/bluez/" + peripheral.adapter
        var channels: [CharacteristicChannel] = []
        var services: [GATTLocalApplication.Service] = []
        var valueKeys: [String] = []
        for service in peripheral.services {
            var characteristics: [GATTLocalApplication.Characteristic] = []
            for characteristic in service.characteristics {
                let name = characteristic.name ?? characteristic.uuid.description
                valueKeys.append(PeripheralValueStore.key(
                    service: service.uuid.description, characteristic: characteristic.uuid.description))
                channels.append(CharacteristicChannel(
                    id: channels.count, name: name, configuration: characteristic, logger: logger))
                characteristics.append(GATTLocalApplication.Characteristic(
                    uuid: characteristic.uuid.description, flags: characteristic.flags.map(\.rawValue),
                    descriptors: characteristic.descriptors.map {
                        .init(uuid: $0.uuid.description, flags: $0.flags.map(\.rawValue), value: $0.value)
                    }))
            }
            services.append(.init(uuid: service.uuid.description, primary: service.primary, characteristics: characteristics))
        }
        self.channels = channels
        self.valueKeys = valueKeys
        values = PeripheralValueStore(directory: configuration.stateDirectory, logger: logger)
        var bySource: [String: [CharacteristicChannel]] = [:]
        for channel in channels { if let topic = channel.configuration.sourceTopic { bySource[topic, default: []].append(channel) } }
        channelsBySource = bySource
        payloadLimits = configuration.mqtt.payloadLimits
        responseTopicRule = ResponseTopicRule(
            baseTopic: configuration.mqtt.baseTopic,
            subscriptions: (Array(bySource.keys) + [topics.bridgeRequestFilter]).compactMap {
                try? MQTTTopicFilter($0)
            })
        let qos = MQTTQoS(rawValue: UInt8(clamping: configuration.mqtt.qos)) ?? .atLeastOnce
        status = PeripheralStatusReporter(channels: channels, topic: topics.base + "/peripheral/status")
        // Session changes are picked up by the once-a-second check of connected centrals (watchCentrals).
        let handler = PeripheralGATTHandler(channels: channels, mqtt: mqtt, qos: qos, logger: logger,
                                            onSubscribersChanged: {})
        self.handler = handler
        application = GATTApplicationExport(
            application: GATTLocalApplication(services: services), handler: handler, connection: bus, logger: logger)
        handler.attach(application)
    }

    package func run() async throws {
        // Values from the last run first: a retained source message, arriving once subscribed, replaces them.
        let restored = values.load()
        for channel in channels {
            if let value = restored[valueKeys[channel.id]] { _ = channel.offerNow(value) }
        }
        let advert = configuration.advertisement
        advertisement = LEAdvertisementExport(
            content: .init(
                localName: advert.localName, serviceUUIDs: advert.serviceUUIDs.map(\.description),
                manufacturerData: advert.manufacturerData,
                serviceData: advert.serviceData.map { ($0.uuid.description, $0.data) },
                discoverable: advert.discoverable, includes: advert.includes.map(\.rawValue),
                appearance: advert.appearance),
            connection: bus, logger: logger,
            onRelease: { [weak self] in Task { await self?.advertisementReleased() } })
        try await application.export()
        try await advertisement.export()
        let owners = try await bus.nameOwnerChanges(of: BlueZName.service)
        let (shutdownSignal, shutdownContinuation) = AsyncStream.makeStream(of: Void.self)
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await withTaskGroup(of: Void.self) { group in
                    group.addTask { await self.consumeMessages() }
                    group.addTask { await self.watchBlueZ(owners) }
                    group.addTask { await self.subscribeOnEveryConnect() }
                    group.addTask { await self.reportStatus() }
                    group.addTask { await self.watchCentrals() }
                    group.addTask { await self.saveValuesPeriodically() }
                    // The children run until the end; on shutdown, unregister from bluetoothd, then stop them all.
                    for await _ in shutdownSignal {}
                    await self.shutDown()
                    group.cancelAll()
                }
            } onGracefulShutdown: {
                shutdownContinuation.finish()
            }
        } onCancel: {
            shutdownContinuation.finish()
        }
    }

    // MARK: - BlueZ registration

    private func watchBlueZ(_ owners: DBusNameOwnerChangeStream) async {
        if (try? await bus.nameHasOwner(BlueZName.service)) == true { await bluetoothdAppeared() }
        for await change in owners {
            if Task.isCancelled { return }
            if change.newOwner != nil {
                await bluetoothdAppeared()
            } else {
                bluetoothdGone()
            }
        }
    }

    private func bluetoothdAppeared() async {
        bluetoothdPresent = true
        applicationRegistered = false
        advertisementRegistered = false
        // bluetoothd may still be exporting its adapters when its name appears: retry with backoff, bounded.
        var backoff = JitteredBackoff(initial: .milliseconds(100), maximum: .seconds(5))
        for attempt in 1...20 where bluetoothdPresent && !applicationRegistered {
            do {
                try await application.register(adapterPath: adapterPath)
                applicationRegistered = true
                logger.notice("peripheral.registered", metadata: ["adapter": "\(adapterPath)"])
            } catch {
                logger.warning("peripheral.register.failed", metadata: ["attempt": "\(attempt)", "error": "\(error)"])
                try? await Task.sleep(for: backoff.next())
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
        if advertisementRegistered { try? await advertisement.unregister(adapterPath: adapterPath) }
        if applicationRegistered { try? await application.unregister(adapterPath: adapterPath) }
        handler.closeAllSessions()
        values.saveIfDirty()
    }

    private func saveValuesPeriodically() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(2))
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

    /// The single consumer: a channel under backpressure suspends it, which pauses the MQTT socket reads.
    private func consumeMessages() async {
        let advertiseTopic = topics.bridgeRequest("advertise")
        for await message in mqtt.messages {
            if Task.isCancelled { return }
            if let channels = channelsBySource[message.topic] {
                let size = message.oversizePayloadLength ?? message.payload.count
                guard size <= payloadLimits.source else {
                    refuseSource(
                        message, reason: "oversize", channel: nil,
                        "the payload has \(size) bytes; at most \(payloadLimits.source) are accepted")
                    continue
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
                    values.set(value, for: valueKeys[channel.id])
                    if !channel.offerNow(value) { await channel.deliver(value) }
                }
            } else if message.topic == advertiseTopic {
                guard await admitRequest(message) else { continue }
                await handleAdvertiseRequest(message)
            }
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
            try? await mqtt.publish(MQTTMessage(topic: responseTopic, payload: writer.bytes, qos: .atLeastOnce,
                                                properties: reply.properties))
        }
        reply.properties = MQTTProperties()
        do { try await mqtt.publish(reply) } catch {
            logger.warning("peripheral.response.failed", metadata: ["error": "\(error)"])
        }
    }

    private func reportStatus() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(1))
            if let message = status.messageIfChanged() {
                try? await mqtt.publish(message)
            }
        }
    }
}
