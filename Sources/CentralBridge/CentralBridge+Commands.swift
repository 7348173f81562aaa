import BluetoothCore
import BridgeCore
import CoreMetrics
import Logging
import MQTTCore

extension CentralBridge {
    /// At most this many commands wait per device; more get a `Busy` error result at once.
    static let maxQueuedCommandsPerDevice = 32

    /// A message on one of the bridge's command topics.
    func handleCommandMessage(_ message: MQTTMessage) async {
        if homeAssistantStatusReceived(message) || fleetMessageReceived(message) { return }
        let requestPrefix = routes.bridgeRequestTopic("")
        if message.topic.hasPrefix(requestPrefix) {
            let verb = String(message.topic.dropFirst(requestPrefix.count))
            // The peripheral bridge checks and answers its own verbs on its own connection.
            if CentralRoutes.peripheralVerbs.contains(verb), configuration.peripheral != nil { return }
            guard
                admitCommand(
                    message, limit: configuration.mqtt.payloadLimits.request,
                    defaultReplyTopic: routes.bridgeResponseTopic(verb))
            else { return }
            await handleBridgeRequest(verb: verb, message: message)
            return
        }
        let target = commandTarget(of: message.topic)
        // In a fleet a device's commands are its owner's alone; the others leave them be, without an answer.
        if let (path, _, _) = target, !fleetAllows(path) {
            fleet?.commandsLeftToOwner.increment()
            return
        }
        let targetRoute = target.flatMap { target in devices[target.0].map { $0.routes[target.1] } }
        guard
            admitCommand(
                message, limit: configuration.mqtt.payloadLimits.command,
                defaultReplyTopic: targetRoute.map { target!.2 ? $0.setResultTopic : $0.getResultTopic })
        else { return }
        guard let (path, routeIndex, isSet) = target, let device = devices[path] else {
            metrics.rejectedCommands.increment()
            return
        }
        metrics.commands.increment()
        let route = device.routes[routeIndex]
        let resultTopic = isSet ? route.setResultTopic : route.getResultTopic
        let request: SetCommand
        do {
            request = try SetCommand(payload: message.payload)
        } catch {
            noteInvalidCommand(message, error)
            let reply = ReplyAddress(
                resultTopic: resultTopic, responseTopic: message.properties.responseTopic,
                correlationData: message.properties.correlationData, transaction: nil)
            return fail(reply, .gattway("InvalidPayload", "\(error)"))
        }
        let reply = ReplyAddress(
            resultTopic: resultTopic, responseTopic: message.properties.responseTopic,
            correlationData: message.properties.correlationData, transaction: request.transaction)
        let kind: PendingCommand.Kind
        if isSet {
            guard route.characteristic.write != nil else {
                return fail(
                    reply,
                    .gattway(
                        "NotWritable",
                        "\(route.characteristic.topicName) of \(device.topic) is not configured as writable"))
            }
            do {
                kind = .write(try route.characteristic.codec.encode(payload: request.value))
            } catch {
                noteInvalidCommand(message, error)
                return fail(
                    reply,
                    .gattway(
                        "InvalidPayload",
                        "the payload cannot be encoded with codec \(route.characteristic.codec): \(error)"))
            }
        } else {
            guard route.characteristic.read else {
                return fail(
                    reply,
                    .gattway(
                        "NotReadable",
                        "\(route.characteristic.topicName) of \(device.topic) is not configured with read: true"))
            }
            kind = .read
        }
        let command = PendingCommand(
            kind: kind, route: routeIndex, transaction: request.transaction,
            responseTopic: message.properties.responseTopic, correlationData: message.properties.correlationData)
        switch devices[path]!.commands.enqueue(command, at: clock.now) {
        case .start(let entry):
            spawn(forDevice: path) { await self.runCommands(path, first: entry.command) }
        case .queued:
            break
        case .refuse(_, .busy(let waiting)):
            fail(reply, .gattway("Busy", "\(device.topic) already has \(waiting) commands waiting"))
        case .refuse(_, .stopping):
            fail(reply, .gattway("ShuttingDown", "gattway is stopping; the command was not run"))
        }
    }

    /// How long a command may wait for its turn and its device: a connect and one GATT operation.
    static func commandDeadline(_ bluetooth: BluetoothSettings) -> Duration {
        bluetooth.connectTimeout + bluetooth.requestTimeout
    }

    /// The reply address of a queued command.
    func replyAddress(of command: PendingCommand, on device: TrackedDevice) -> ReplyAddress {
        let route = device.routes[command.route]
        return ReplyAddress(
            resultTopic: { if case .write = command.kind { route.setResultTopic } else { route.getResultTopic } }(),
            responseTopic: command.responseTopic, correlationData: command.correlationData,
            transaction: command.transaction)
    }

    /// Where a topic points: the device path, the route index, and whether it is a `/set` (else a `/get`).
    private func commandTarget(of topic: String) -> (String, Int, Bool)? {
        let isSet = topic.hasSuffix("/set")
        guard isSet || topic.hasSuffix("/get") else { return nil }
        let valueTopic = String(topic.dropLast(4))
        for (path, device) in devices {
            if let index = device.routes.firstIndex(where: { $0.valueTopic == valueTopic }) {
                return (path, index, isSet)
            }
        }
        return nil
    }

    /// Runs the device's queued commands one after the other (one GATT operation in flight per device; other
    /// devices have their own workers, so a slow device never stalls another).
    private func runCommands(_ path: String, first: PendingCommand) async {
        var next: PendingCommand? = first
        while let command = next, let device = devices[path] {
            defer { next = takeNextCommand(path) }
            let route = device.routes[command.route]
            let reply = replyAddress(of: command, on: device)
            // Once stopping, what is still queued is answered at once instead of each waiting for its device.
            guard !shuttingDown else {
                fail(reply, .gattway("ShuttingDown", "gattway is stopping; the command was not run"))
                continue
            }
            do {
                let characteristicPath = try await readyCharacteristic(path, route)
                let timeout = configuration.bluetooth.requestTimeout
                switch command.kind {
                case .write(let bytes):
                    let withResponse = route.characteristic.write != .withoutResponse
                    try await retryingInProgress {
                        try await self.central.writeValue(
                            characteristic: characteristicPath, bytes, withResponse: withResponse, timeout: timeout)
                    }
                    succeed(reply)
                case .read:
                    let value = try await retryingInProgress {
                        try await self.central.readValue(characteristic: characteristicPath, timeout: timeout)
                    }
                    publishReadValue(value, route: route, reply: reply)
                }
            } catch {
                metrics.commandFailures.increment()
                fail(reply, Self.failure(from: error))
            }
            devices[path]?.lastActivity = clock.now
        }
        if case .onDemand = devices[path]?.policy { scheduleIdleDisconnect(path) }
        if !devices.values.contains(where: \.commandWorkerRunning) {
            for waiter in commandWorkerWaiters { waiter.fire() }
            commandWorkerWaiters.removeAll()
        }
    }

    /// The command in flight finished: answers those that waited past their deadline and returns the next one.
    private func takeNextCommand(_ path: String) -> PendingCommand? {
        guard let device = devices[path], let progress = devices[path]?.commands.finished(at: clock.now) else {
            return nil
        }
        for command in progress.expired {
            fail(
                replyAddress(of: command, on: device),
                .gattway(
                    "Timeout", "\(device.topic) did not get to the command within \(device.commands.commandTimeout)"))
        }
        return progress.start?.command
    }

    /// Returns once no device runs commands. During shutdown each worker answers what it still has at once (each
    /// GATT operation in flight is bounded by the request timeout), so this wait is bounded too.
    func commandWorkersFinished() async {
        guard devices.values.contains(where: \.commandWorkerRunning) else { return }
        let signal = DeviceWaiterSignal()
        commandWorkerWaiters.append(signal)
        try? await signal.wait()  // cancelled: the stop is no longer graceful, nobody waits for answers
    }

    /// The characteristic's object path once the device is connected: on_demand devices are connected now;
    /// others are waited for up to the request timeout.
    private func readyCharacteristic(_ path: String, _ route: CharacteristicRoute) async throws -> String {
        guard let device = devices[path] else {
            throw CommandFailure.gattway("DeviceUnavailable", "the device is gone")
        }
        let timeout = configuration.bluetooth.requestTimeout
        if !(tree.devices[path]?.servicesResolved ?? false) {
            switch device.policy {
            case .onDemand: try await establish(path)
            case .always:
                do {
                    try await waitForDevice(path, timeout: timeout) { $0?.servicesResolved ?? false }
                } catch {
                    throw CommandFailure(
                        name: BlueZErrorName.notConnected.rawValue,
                        message: "\(device.topic) is not connected (waited \(timeout))")
                }
            case .never:
                throw CommandFailure.gattway("NotConnectable", "\(device.topic) is configured with connect: never")
            }
        }
        guard
            let characteristic = tree.characteristic(
                ofDevice: path, service: route.characteristic.service, uuid: route.characteristic.uuid)
        else {
            throw CommandFailure.gattway(
                "NoSuchCharacteristic",
                "\(device.topic) has no characteristic \(route.characteristic.uuid) in service \(route.characteristic.service)"
            )
        }
        return characteristic.path
    }

    private func publishReadValue(_ value: [UInt8], route: CharacteristicRoute, reply: ReplyAddress) {
        guard let payload = try? route.characteristic.codec.decode(value) else {
            return fail(
                reply,
                .gattway(
                    "UndecodableValue", "the value read cannot be decoded with codec \(route.characteristic.codec)"))
        }
        // The value topic gets it through PropertiesChanged(Value) (BlueZ updates Value on a read); the requester's
        // Response Topic gets it directly.
        if let responseTopic = reply.responseTopic {
            var properties = MQTTProperties()
            properties.correlationData = reply.correlationData
            outbox.send(MQTTMessage(topic: responseTopic, payload: payload, qos: .atLeastOnce, properties: properties))
        }
        // `<char>/get/result` mirrors `/set/result`: the outcome, not the value.
        if let resultTopic = reply.resultTopic {
            outbox.send(
                MQTTMessage(
                    topic: resultTopic, payload: SetResult.success.payload(transaction: reply.transaction),
                    qos: .atLeastOnce))
        }
    }

    func succeed(_ reply: ReplyAddress, extra: ((inout JSONWriter) -> Void)? = nil) {
        guard let extra else { return send(SetResult.success.payload(transaction: reply.transaction), to: reply) }
        var writer = JSONWriter()
        writer.beginObject()
        writer.field("ok", true)
        extra(&writer)
        reply.writeTransaction(into: &writer)
        writer.endObject()
        send(writer.bytes, to: reply)
    }

    func fail(_ reply: ReplyAddress, _ failure: CommandFailure) {
        send(
            SetResult.failure(error: failure.name, message: failure.message).payload(transaction: reply.transaction),
            to: reply)
    }

    private func send(_ payload: [UInt8], to reply: ReplyAddress) {
        if let topic = reply.resultTopic {
            outbox.send(MQTTMessage(topic: topic, payload: payload, qos: .atLeastOnce))
        }
        if let responseTopic = reply.responseTopic {
            var properties = MQTTProperties()
            properties.correlationData = reply.correlationData
            outbox.send(MQTTMessage(topic: responseTopic, payload: payload, qos: .atLeastOnce, properties: properties))
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
}

/// Where the outcome of a command goes: its result topic and, with MQTT 5, the requester's Response Topic.
struct ReplyAddress: Sendable {
    let resultTopic: String?
    let responseTopic: String?
    let correlationData: [UInt8]?
    let transaction: JSONValue?

    func writeTransaction(into writer: inout JSONWriter) {
        guard let transaction else { return }
        writer.key("transaction")
        transaction.write(to: &writer)
    }
}
