import Foundation
import TestWorld
import Testing

/// Commands through MQTT 5 request/response, on-demand connections and bridge requests.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct CentralCommandsEndToEndTests {
    static let onDemandLock = """
        bluetooth:
          adapter: hci0
          request_timeout: 5
          connect_timeout: 5
        devices:
          - name: lock
            address: "D0:0D:10:C4:00:01"
            connect: on_demand
            idle_timeout: 1
            characteristics:
              - { name: control, service: "0000fff0-0000-1000-8000-00805f9b34fb", uuid: "0000fff1-0000-1000-8000-00805f9b34fb", write: with_response, codec: utf8 }
              - { name: state, service: "0000fff0-0000-1000-8000-00805f9b34fb", uuid: "0000fff2-0000-1000-8000-00805f9b34fb", read: true, codec: utf8 }
        """

    @Test func mqtt5ResponseTopicGetsTheResultWithCorrelationData() async throws {
        let world = try await CentralWorld(scenario: "demo.yaml", config: Configs.strapAndLock)
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/lock/availability") { $0 == "online" }
            let replies = try await MQTTObserver(
                port: world.broker.port, filters: ["client/replies"], capturingProperties: true)
            try await world.publish(
                "gattway/lock/control/set", "unlock",
                extraArguments: [
                    "-V", "5", "-D", "publish", "response-topic", "client/replies",
                    "-D", "publish", "correlation-data", "req-17",
                ])
            let reply = try await replies.waitForMessage(on: "client/replies")
            #expect(reply.payload == #"{"ok":true}"#)
            #expect(reply.correlationData == "req-17")
            try await world.observer.waitForMessage(on: "gattway/lock/control/set/result") { $0 == #"{"ok":true}"# }
            await replies.stop()
        }
    }

    @Test func onDemandDeviceConnectsForACommandAndDisconnectsWhenIdle() async throws {
        let world = try await CentralWorld(scenario: "demo.yaml", config: Self.onDemandLock)
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/lock/advert")
            try await world.publish("gattway/lock/control/set", #"{"value":"lock","transaction":1}"#)
            try await world.observer.waitForMessage(on: "gattway/lock/control/set/result") {
                $0 == #"{"ok":true,"transaction":1}"#
            }
            try await world.observer.waitForMessage(on: "gattway/lock/availability") { $0 == "online" }
            // idle_timeout is 1 s: the bridge lets go of the link.
            try await world.observer.waitForMessage(on: "gattway/lock/availability", timeout: .seconds(20)) {
                $0 == "offline"
            }
            // A read connects again and the value reaches the value topic.
            try await world.publish("gattway/lock/state/get", "")
            try await world.observer.waitForMessage(on: "gattway/lock/state") { $0 == "lock" }
        }
    }

    @Test func bridgeRequestsDisconnectAndConnectADevice() async throws {
        let world = try await CentralWorld(scenario: "demo.yaml", config: Configs.strapAndLock)
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/lock/availability") { $0 == "online" }
            try await world.publish("gattway/bridge/request/connect", #"{"device":"nobody","transaction":"x"}"#)
            try await world.observer.waitForMessage(on: "gattway/bridge/response/connect") {
                $0.contains("gattway.Error.UnknownDevice") && $0.contains("\"transaction\":\"x\"")
            }
            try await world.publish("gattway/bridge/request/disconnect", #"{"device":"lock"}"#)
            try await world.observer.waitForMessage(on: "gattway/bridge/response/disconnect") {
                $0.contains("\"ok\":true")
            }
            try await world.observer.waitForMessage(on: "gattway/lock/availability") { $0 == "offline" }
            // connect: always brings it back by itself.
            try await world.observer.waitForMessage(on: "gattway/lock/availability", skipping: 1) { $0 == "online" }
            try await world.publish("gattway/bridge/request/bogus", "{}")
            try await world.observer.waitForMessage(on: "gattway/bridge/response/bogus") {
                $0.contains("UnknownRequest")
            }
        }
    }
}

/// `bridge/request/scan` answers after its window with what was heard.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct CentralScanEndToEndTests {
    @Test func scanAnswersWithTheDevicesHeard() async throws {
        let world = try await CentralWorld(scenario: "demo.yaml", config: Configs.strapAndLock)
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/bridge/state") { $0 == "online" }
            // The strap has been heard (it is connected) before the window opens: a 1 s window on a loaded machine
            // may close before discovery first reports it.
            try await world.observer.waitForMessage(on: "gattway/chest-strap/availability") { $0 == "online" }
            try await world.publish("gattway/bridge/request/scan", #"{"duration":1,"transaction":"s"}"#)
            let answer = try await world.observer.waitForMessage(on: "gattway/bridge/response/scan")
            #expect(answer.payload.contains("\"ok\":true"))
            #expect(answer.payload.contains("C4:7C:8D:6A:3E:11"))
            #expect(answer.payload.contains("\"tracked_as\":\"chest-strap\""))
            #expect(answer.payload.contains("\"transaction\":\"s\""))
            try await world.publish("gattway/bridge/request/scan", #"{"duration":9999}"#)
            try await world.observer.waitForMessage(on: "gattway/bridge/response/scan", skipping: 1) {
                $0.contains("InvalidRequest")
            }
        }
    }
}
