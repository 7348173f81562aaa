import BlueZ
package import BridgeCore
package import DBus
package import Logging
package import MQTTCore
import ServiceLifecycle

/// Answers pairings that remote centrals start with the local peripheral, when it serves characteristics that need
/// an encrypted link: bluetoothd refuses such a pairing unless a default agent approves it (src/device.c new_auth()).
///
/// The agent lives on a D-Bus connection of its own: bluetoothd keeps one agent per client (src/agent.c
/// register_agent() answers AlreadyExists to a second one), and the central bridge registers its own agent, on the
/// main connection, for the pairings it starts. This connection answers only bluetoothd. The agent is registered
/// again each time bluetoothd appears, since a restarted bluetoothd knows no agents.
package actor PeripheralPairingService: Service {
    let passkey: UInt32?
    let eventTopic: String
    let mqtt: any MQTTClient
    let logger: Logger
    let busAddress: DBusBus
    /// Whether bluetoothd holds the agent as its default one now.
    var registered = false
    /// How long one registration call may take.
    static let callTimeout: Duration = .seconds(5)

    package init(configuration: BridgeConfiguration, mqtt: any MQTTClient, logger: Logger, bus: DBusBus = .system) {
        passkey = configuration.peripheral?.passkey
        eventTopic = TopicLayout(configuration.mqtt).bridgeEvent
        self.mqtt = mqtt
        self.logger = logger
        busAddress = bus
    }

    package func run() async throws {
        let bus = try await DBusConnection.connect(to: busAddress, name: "agent", logger: logger)
        try await bus.restrictExportedObjects(toOwnerOf: BlueZName.service)
        // The agent answers on the connection's queue; its prompts are published from here, a bounded few at once.
        let (prompts, promptSink) = AsyncStream.makeStream(
            of: BlueZPeripheralAgent.Prompt.self, bufferingPolicy: .bufferingNewest(16))
        let agent = BlueZPeripheralAgent(passkey: passkey) { promptSink.yield($0) }
        try await bus.export(path: BlueZPeripheralAgent.path, interfaces: [agent.interface])
        let bluez = BlueZClient(connection: bus, logger: logger)
        let owners = try await bus.nameOwnerChanges(of: BlueZName.service)
        if (try? await bus.nameHasOwner(BlueZName.service)) == true {
            registered = await register(bluez)
        }
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await change in owners {
                        await self.bluetoothdChanged(present: change.newOwner != nil, bluez)
                    }
                }
                group.addTask {
                    for await prompt in prompts { await self.publish(prompt) }
                }
                // Both run until graceful shutdown cancels them.
            }
        }
        promptSink.finish()
        if registered {
            try? await bluez.unregisterAgent(path: BlueZPeripheralAgent.path, timeout: Self.callTimeout)
        }
        await bus.close()
    }

    private func bluetoothdChanged(present: Bool, _ bluez: BlueZClient) async {
        registered = present ? await register(bluez) : false
    }

    /// RegisterAgent then RequestDefaultAgent; bluetoothd may still be starting when its name appears, so failed
    /// attempts are retried with backoff, a bounded number of times.
    private func register(_ bluez: BlueZClient) async -> Bool {
        var backoff = JitteredBackoff(initial: .milliseconds(100), maximum: .seconds(5))
        for attempt in 1...20 where !Task.isCancelled {
            do {
                do {
                    try await bluez.registerAgent(
                        path: BlueZPeripheralAgent.path, capability: BlueZPeripheralAgent.capability,
                        timeout: Self.callTimeout)
                } catch let error as DBusError where error.name == "org.bluez.Error.AlreadyExists" {
                    // Registered by an earlier attempt whose reply was lost: making it the default is what is left.
                }
                try await bluez.requestDefaultAgent(path: BlueZPeripheralAgent.path, timeout: Self.callTimeout)
                logger.notice("peripheral.agent.registered", metadata: ["passkey": "\(passkey != nil)"])
                return true
            } catch {
                logger.warning(
                    "peripheral.agent.register.failed",
                    metadata: [
                        "attempt": "\(attempt)", "error": "\(error)",
                    ])
                try? await Task.sleep(for: backoff.next())
            }
        }
        return false
    }

    /// Publishes a prompt as a `pairing_prompt` event on `<base>/bridge/event`.
    private func publish(_ prompt: BlueZPeripheralAgent.Prompt) async {
        logger.notice(
            "peripheral.pairing",
            metadata: [
                "central": "\(prompt.central)", "message": "\(prompt.message)",
            ])
        var event = BridgeEvent(type: "pairing_prompt", message: prompt.message)
        event.central = prompt.central
        event.passkey = prompt.passkey
        do {
            try await mqtt.publish(MQTTMessage(topic: eventTopic, payload: event.payload, qos: .atLeastOnce))
        } catch {
            logger.warning("peripheral.pairing.publish.failed", metadata: ["error": "\(error)"])
        }
    }
}

extension BlueZClient {
    /// AgentManager1.RequestDefaultAgent: bluetoothd asks this client's agent about pairings nobody else claims.
    package func requestDefaultAgent(path: String, timeout: Duration) async throws {
        _ = try await connection.call(
            destination: BlueZName.service, path: BlueZName.agentManagerPath, interface: BlueZName.agentManager,
            method: "RequestDefaultAgent", arguments: [.objectPath(path)], timeout: timeout)
    }
}
