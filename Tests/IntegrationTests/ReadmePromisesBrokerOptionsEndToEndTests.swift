import Foundation
import TestWorld
import Testing

/// The daemon's own broker options, run as a user runs them: the built gattway against a real mosquitto that
/// refuses anonymous clients, speaks TLS with certificates made by openssl, or hears MQTT 3.1.1.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct ReadmePromisesBrokerOptionsEndToEndTests {
    static let users = ["gattway": "door-bell-42", "watcher": "looking-glass"]
    static let watcher = ["-u", "watcher", "-P", "looking-glass"]

    @Test func passwordFileAuthenticatesWithABrokerThatRefusesAnonymousClients() async throws {
        let broker = try await MosquittoBroker(users: Self.users)
        let world = try await BrokerOptionsWorld(
            broker: broker, observe: .init(port: broker.port, extra: Self.watcher),
            prepare: { directory in
                // A trailing newline, as an editor leaves it: it is not part of the password.
                try "door-bell-42\n".write(toFile: directory + "/mqtt.pw", atomically: true, encoding: .utf8)
            },
            mqtt: { directory in
                """
                  url: "\(broker.url)"
                  client_id: gattway-auth
                  username: gattway
                  password_file: "\(directory)/mqtt.pw"
                """
            })
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/bridge/state") { $0.payload == "online" }
            try await world.observer.waitForMessage(on: "gattway/chest-strap/heart_rate") {
                $0.payload.contains("\"bpm\":")
            }
            #expect(await broker.log.contains("as gattway-auth"))
        }
    }

    @Test func passwordFromTheEnvironmentAuthenticates() async throws {
        let broker = try await MosquittoBroker(users: Self.users)
        let world = try await BrokerOptionsWorld(
            broker: broker, observe: .init(port: broker.port, extra: Self.watcher),
            environment: ["GATTWAY_TEST_MQTT_PASSWORD": "door-bell-42"],
            mqtt: { _ in
                """
                  url: "\(broker.url)"
                  client_id: gattway-env
                  username: gattway
                  password_env: GATTWAY_TEST_MQTT_PASSWORD
                """
            })
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/bridge/state") { $0.payload == "online" }
            try await world.observer.waitForMessage(on: "gattway/lock/availability") { $0.payload == "online" }
        }
    }

    @Test func tlsWithTheBrokersCertificateAuthorityCarriesCommands() async throws {
        let broker = try await MosquittoBroker(tls: true)
        let ca = try #require(broker.certificates?.caFile)
        let world = try await BrokerOptionsWorld(
            broker: broker, observe: .init(port: broker.port, host: "localhost", extra: ["--cafile", ca]),
            mqtt: { _ in
                """
                  url: "\(broker.url)"
                  client_id: gattway-tls
                  tls: { ca_file: "\(ca)" }
                """
            })
        try await world.run { world in
            #expect(broker.url.hasPrefix("mqtts://"))
            try await world.observer.waitForMessage(on: "gattway/lock/availability") { $0.payload == "online" }
            try await world.observer.publish("gattway/lock/control/set", "lock")
            try await world.observer.waitForMessage(on: "gattway/lock/control/set/result") {
                $0.payload == #"{"ok":true}"#
            }
        }
    }

    /// A broker on the same machine through its unix socket (`unix:///…`): values out and commands in, while the
    /// observer uses the broker's TCP listener.
    @Test func aUnixSocketCarriesValuesAndCommands() async throws {
        let broker = try await MosquittoBroker(unixSocket: true)
        let socket = try #require(broker.socketPath)
        let world = try await BrokerOptionsWorld(
            broker: broker, observe: .init(port: broker.port),
            mqtt: { _ in
                """
                  url: "unix://\(socket)"
                  client_id: gattway-unix
                """
            })
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/chest-strap/heart_rate") {
                $0.payload.contains("\"bpm\":")
            }
            try await world.observer.publish("gattway/lock/control/set", "lock")
            try await world.observer.waitForMessage(on: "gattway/lock/control/set/result") {
                $0.payload == #"{"ok":true}"#
            }
            // mosquitto names a unix socket client's address after the socket's path.
            let connected = await broker.log.split(separator: "\n").filter { $0.contains("as gattway-unix ") }
            #expect(!connected.isEmpty && connected.allSatisfy { $0.contains(socket) }, "\(connected)")
        }
    }

    @Test func mqtt311ConnectsWithThatProtocolAndCarriesCommands() async throws {
        let broker = try await MosquittoBroker()
        let world = try await BrokerOptionsWorld(
            broker: broker, observe: .init(port: broker.port),
            mqtt: { _ in
                """
                  url: "\(broker.url)"
                  client_id: gattway-v311
                  protocol: "3.1.1"
                """
            })
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/lock/availability") { $0.payload == "online" }
            // mosquitto logs each connection's protocol as its own number: p2 is MQTT 3.1.1, p5 is MQTT 5 (as the
            // observer's mosquitto_sub -V 5 shows).
            let log = await broker.log.split(separator: "\n")
            let connected = log.filter { $0.contains("as gattway-v311 ") }
            #expect(!connected.isEmpty && connected.allSatisfy { $0.contains("(p2,") }, "\(connected)")
            #expect(log.contains { $0.contains("New client connected") && $0.contains("(p5,") }, "\(log)")
            try await world.observer.publish("gattway/lock/control/set", "unlock")
            try await world.observer.waitForMessage(on: "gattway/lock/control/set/result") {
                $0.payload == #"{"ok":true}"#
            }
        }
    }

    @Test(arguments: [0, 2])
    func valuesArePublishedAtTheConfiguredQoS(qos: Int) async throws {
        let broker = try await MosquittoBroker()
        let world = try await BrokerOptionsWorld(
            broker: broker, observe: .init(port: broker.port),
            mqtt: { _ in
                """
                  url: "\(broker.url)"
                  client_id: gattway-qos
                  qos: \(qos)
                """
            })
        try await world.run { world in
            // The observer subscribes at QoS 2, so each message arrives at the QoS it was published with.
            let value = try await world.observer.waitForMessage(on: "gattway/chest-strap/heart_rate")
            #expect(value.qos == qos, "\(value)")
        }
    }
}
