import Foundation
import TestWorld
import Testing

/// What the fleet protocol relies on, checked on a real two-node RabbitMQ cluster with the MQTT plugin (Debian 12's
/// RabbitMQ 3.10, MQTT 3.1.1 only) with mosquitto's own clients and the built gattway: live messages, Last Wills and
/// a gateway's traffic cross nodes; retained messages do not (RabbitMQ keeps them on the node that received them,
/// and sends none for a filter with a wildcard), which the README's Fleets section states as a limit of RabbitMQ
/// clusters.
///
/// One cluster for every check: starting one takes 20 s on an idle shared 2-core machine, minutes under load.
/// Observers left running when a check throws are killed as they are released.
@Suite(.serialized, .timeLimit(.minutes(15)))
struct RabbitMQClusterTests {
    @Test func acrossTwoNodesLiveMessagesLastWillsAndAGatewayWorkButRetainedMessagesDoNot() async throws {
        // Checks run one after another on one cluster; each names what failed.
        let cluster = try await RabbitMQCluster(nodeCount: 2)
        print("RabbitMQCluster: 2 nodes started and clustered in \(await cluster.startupDuration)")
        do {
            try await checkLiveMessagesCrossNodes(cluster)
            try await checkLastWillCrossesNodes(cluster)
            try await checkRetainedMessagesStayOnTheirNode(cluster)
            try await checkGatewayOnNode1IsSeenAndCommandedFromNode2(cluster)
        } catch {
            Issue.record("node 1 log:\n\(cluster.log(node: 0))\nnode 2 log:\n\(cluster.log(node: 1))")
            await cluster.stop()
            throw error
        }
        await cluster.stop()
    }

    /// A message published on node 1 reaches a subscriber on node 2.
    private func checkLiveMessagesCrossNodes(_ cluster: RabbitMQCluster) async throws {
        let node1 = cluster.nodes[0].mqttPort
        let node2 = cluster.nodes[1].mqttPort
        let observer = try await MQTTObserver(port: node2, filters: ["fleet/#"], protocolVersion: "311")
        try await MQTTObserver.publish(
            port: node1, topic: "fleet/sightings/hall", payload: "heard", extraArguments: ["-V", "311"])
        let message = try await observer.waitForMessage(on: "fleet/sightings/hall")
        #expect(message.payload == "heard")
        await observer.stop()
    }

    /// The Last Will of a client on node 1 killed with SIGKILL reaches a subscriber on node 2.
    private func checkLastWillCrossesNodes(_ cluster: RabbitMQCluster) async throws {
        let node1 = cluster.nodes[0].mqttPort
        let node2 = cluster.nodes[1].mqttPort
        let observer = try await MQTTObserver(port: node2, filters: ["fleet/bridge/+/state"], protocolVersion: "311")
        let gateway = try await WillClient.start(
            port: node1, clientID: "gateway-hall", willTopic: "fleet/bridge/hall/state", willPayload: "offline")
        gateway.process.send(SIGKILL)
        let will = try await observer.waitForMessage(on: "fleet/bridge/hall/state", timeout: .seconds(60))
        #expect(will.payload == "offline")
        await observer.stop()
    }

    /// A retained message is kept by the node that received it: a new subscriber there gets it, a new subscriber on
    /// the other node does not, and a filter with a wildcard gets none even on the same node.
    private func checkRetainedMessagesStayOnTheirNode(_ cluster: RabbitMQCluster) async throws {
        let node1 = cluster.nodes[0].mqttPort
        let node2 = cluster.nodes[1].mqttPort
        let claim = "fleet/owner/lock"
        try await MQTTObserver.publish(
            port: node1, topic: claim, payload: #"{"gateway":"hall","term":1}"#, retain: true,
            extraArguments: ["-V", "311"])

        let sameNode = try await MQTTObserver(port: node1, filters: [claim], protocolVersion: "311")
        let kept = try await sameNode.waitForMessage(on: claim)
        #expect(kept.retained && kept.payload == #"{"gateway":"hall","term":1}"#)

        // Subscribed (the observer saw its marker), each is sent a live message after its subscription: RabbitMQ
        // sends retained messages while it handles the SUBSCRIBE, so one held for them would have come first.
        let otherNode = try await MQTTObserver(port: node2, filters: [claim, "fleet/after"], protocolVersion: "311")
        let wildcard = try await MQTTObserver(
            port: node1, filters: ["fleet/owner/+", "fleet/after"], protocolVersion: "311")
        try await MQTTObserver.publish(
            port: node1, topic: "fleet/after", payload: "live", extraArguments: ["-V", "311"])
        try await otherNode.waitForMessage(on: "fleet/after")
        try await wildcard.waitForMessage(on: "fleet/after")
        #expect(otherNode.messages(on: claim).isEmpty, "RabbitMQ 3.10 sent node 1's retained claim to node 2")
        #expect(wildcard.messages(on: claim).isEmpty, "RabbitMQ 3.10 sent a retained message for a wildcard filter")
        for observer in [sameNode, otherNode, wildcard] { await observer.stop() }
    }
}

extension RabbitMQClusterTests {
    /// The built gattway (libmosquitto, MQTT 3.1.1, a gateway id) on node 1: a client on node 2 sees it online,
    /// sees its device's values and gets the result of a command it sends; when gattway is killed with SIGKILL,
    /// its Last Will reaches node 2.
    private func checkGatewayOnNode1IsSeenAndCommandedFromNode2(_ cluster: RabbitMQCluster) async throws {
        let node2 = cluster.nodes[1].mqttPort
        let simulator = try await BlueZSimulatorProcess(scenario: "lock.yaml")
        let directory = try makeTemporaryDirectory("gattway-rabbitmq-e2e")
        let config = """
            mqtt:
              url: "\(cluster.mqttURL(node: 0))"
              base_topic: gattway
              client_id: gattway-hall
              protocol: "3.1.1"
              gateway_id: hall
              keepalive: 5
            state_dir: "\(directory)/state"
            bluetooth:
              adapter: hci0
            devices:
              - name: lock
                address: "D0:0D:10:C4:00:01"
                connect: always
                characteristics:
                  - { name: control, service: "0000fff0-0000-1000-8000-00805f9b34fb", uuid: "0000fff1-0000-1000-8000-00805f9b34fb", write: with_response, codec: utf8 }
            """
        try config.write(toFile: directory + "/config.yaml", atomically: true, encoding: .utf8)
        // Subscribed before gattway starts: retained messages of node 1 would not reach node 2 (see above).
        let observer = try await MQTTObserver(port: node2, filters: ["gattway/#"], protocolVersion: "311")
        let gattway = try GattwayBinary.start(
            config: directory + "/config.yaml", environment: ["DBUS_SYSTEM_BUS_ADDRESS": simulator.busAddress])
        do {
            try await observer.waitForMessage(on: "gattway/bridge/hall/state", timeout: .seconds(60)) { $0 == "online" }
            try await observer.waitForMessage(on: "gattway/lock/availability", timeout: .seconds(60)) { $0 == "online" }
            try await MQTTObserver.publish(
                port: node2, topic: "gattway/lock/control/set", payload: "unlock", extraArguments: ["-V", "311"])
            let result = try await observer.waitForMessage(on: "gattway/lock/control/set/result")
            #expect(result.payload == #"{"ok":true}"#)
            let statesBeforeKill = observer.messages(on: "gattway/bridge/hall/state").count
            gattway.send(SIGKILL)
            // The killed process's socket closes, so RabbitMQ publishes the Will at once (within 1.5 keepalives had
            // the connection hung instead).
            try await observer.waitForMessage(
                on: "gattway/bridge/hall/state", skipping: statesBeforeKill, timeout: .seconds(60)
            ) { $0 == "offline" }
        } catch {
            Issue.record("gattway log:\n\(gattway.errorOutput.suffix(4000))")
            await gattway.stop()
            await observer.stop()
            await simulator.stop()
            throw error
        }
        await gattway.stop()
        await observer.stop()
        await simulator.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// A `mosquitto_sub` connected with a Last Will, standing for a gateway whose process can be killed.
private struct WillClient {
    let process: ChildProcess

    /// Connects and waits until the client is subscribed (it prints a marker published to it), so that the broker
    /// holds its Will.
    static func start(port: UInt16, clientID: String, willTopic: String, willPayload: String) async throws -> WillClient
    {
        let marker = "gattway-test/will-ready/\(UUID().uuidString)"
        let process = try ChildProcess(
            "mosquitto_sub",
            [
                "-h", "127.0.0.1", "-p", "\(port)", "-V", "311", "-i", clientID, "-k", "5", "-q", "1",
                "--will-topic", willTopic, "--will-payload", willPayload, "--will-qos", "1", "--will-retain", "-t",
                marker,
            ])
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            try? await MQTTObserver.publish(port: port, topic: marker, payload: "ready", extraArguments: ["-V", "311"])
            if process.outputLines.contains("ready") { return WillClient(process: process) }
            if !process.isRunning { throw TestWorldError("mosquitto_sub with a Will exited: \(process.errorOutput)") }
            try await Task.sleep(for: .milliseconds(100))
        }
        await process.stop()
        throw TestWorldError("mosquitto_sub with a Will did not subscribe within 20 s: \(process.errorOutput)")
    }
}
