import Foundation
import TestWorld
import Testing

/// The central bridge end to end: the built gattway binary, the BlueZ simulator, mosquitto, and mosquitto_sub /
/// mosquitto_pub as the user's MQTT clients.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct CentralBridgeEndToEndTests {
    private func withWorld(
        scenario: String = "demo.yaml", config: String = Configs.strapAndLock,
        _ body: (CentralWorld) async throws -> Void
    ) async throws {
        try await CentralWorld(scenario: scenario, config: config).run(body)
    }

    @Test func notificationReachesValueTopicInItsCodec() async throws {
        try await withWorld { world in
            try await world.observer.waitForMessage(on: "gattway/bridge/state") { $0 == "online" }
            try await world.observer.waitForMessage(on: "gattway/chest-strap/availability") { $0 == "online" }
            let value = try await world.observer.waitForMessage(on: "gattway/chest-strap/heart_rate") {
                $0.contains("\"bpm\":")
            }
            #expect(value.payload.hasPrefix("{\"bpm\":"))
            // The strap's own stream stops, so the notification the test sends is the last value.
            try await world.control.startNotifying("C4:7C:8D:6A:3E:11", uuid: "2A37", rate: 0)
            try await world.control.notify("C4:7C:8D:6A:3E:11", uuid: "2A37", [0x00, 0xC8])
            try await world.observer.waitForMessage(on: "gattway/chest-strap/heart_rate") { $0 == "{\"bpm\":200}" }
            // Values are retained by default: a client subscribing afterwards gets that last value at once.
            let late = try await MQTTObserver(port: world.broker.port, filters: ["gattway/chest-strap/heart_rate"])
            let kept = try await late.waitForMessage(on: "gattway/chest-strap/heart_rate")
            await late.stop()
            #expect(kept.retained)
            #expect(kept.payload == "{\"bpm\":200}")
        }
    }

    @Test func aValueConfiguredNotRetainedIsNotKeptForALateSubscriber() async throws {
        let config = Configs.strapAndLock.replacingOccurrences(
            of: "notify: true, codec: heart_rate_measurement }",
            with: "notify: true, codec: heart_rate_measurement, retain: false }")
        try await withWorld(config: config) { world in
            try await world.observer.waitForMessage(on: "gattway/lock/availability") { $0 == "online" }
            // Online once its notifications are subscribed: the value sent next is not missed.
            try await world.observer.waitForMessage(on: "gattway/chest-strap/availability") { $0 == "online" }
            try await world.control.startNotifying("C4:7C:8D:6A:3E:11", uuid: "2A37", rate: 0)
            try await world.control.notify("C4:7C:8D:6A:3E:11", uuid: "2A37", [0x00, 0xC8])
            let live = try await world.observer.waitForMessage(on: "gattway/chest-strap/heart_rate") {
                $0 == "{\"bpm\":200}"
            }
            #expect(live.retained == false)
            // The late subscriber is ready once its own marker message came back; a retained message on the value
            // topic would have been delivered before that marker, so it holds no value now.
            let late = try await MQTTObserver(
                port: world.broker.port, filters: ["gattway/chest-strap/heart_rate", "gattway/lock/availability"])
            try await late.waitForMessage(on: "gattway/lock/availability") { $0 == "online" }
            #expect(late.messages(on: "gattway/chest-strap/heart_rate").isEmpty)
            await late.stop()
        }
    }

    @Test func setWritesWithResponseAndPublishesOk() async throws {
        try await withWorld { world in
            try await world.observer.waitForMessage(on: "gattway/lock/availability") { $0 == "online" }
            try await world.publish("gattway/lock/control/set", #"{"value":"lock","transaction":"t-1"}"#)
            let result = try await world.observer.waitForMessage(on: "gattway/lock/control/set/result")
            #expect(result.payload == #"{"ok":true,"transaction":"t-1"}"#)
            let writes = try await world.control.writes(
                "D0:0D:10:C4:00:01", uuid: "0000fff1-0000-1000-8000-00805f9b34fb")
            #expect(writes.last == Array("lock".utf8))
            // The lock reports its new state by notification.
            try await world.observer.waitForMessage(on: "gattway/lock/state") { $0 == "lock" }
        }
    }

    @Test func refusedWriteReportsTheBlueZError() async throws {
        try await withWorld { world in
            try await world.observer.waitForMessage(on: "gattway/lock/availability") { $0 == "online" }
            try await world.publish("gattway/lock/control/set", "jam")
            let result = try await world.observer.waitForMessage(on: "gattway/lock/control/set/result")
            #expect(result.payload.contains(#""ok":false"#))
            #expect(result.payload.contains(#""error":"org.bluez.Error.Failed""#))
            #expect(result.payload.contains(#""att_error":"0x80""#))
        }
    }

    @Test func badCommandsGetErrorResultsAndTheDaemonKeepsRunning() async throws {
        try await withWorld { world in
            try await world.observer.waitForMessage(on: "gattway/chest-strap/availability") { $0 == "online" }
            // Not hex for a hex codec; a read-only characteristic; an envelope with an object value.
            try await world.publish("gattway/chest-strap/control/set", "zz-not-hex")
            try await world.observer.waitForMessage(on: "gattway/chest-strap/control/set/result") {
                $0.contains("gattway.Error.InvalidPayload")
            }
            try await world.publish("gattway/chest-strap/heart_rate/set", "01")
            try await world.observer.waitForMessage(on: "gattway/chest-strap/heart_rate/set/result") {
                $0.contains("gattway.Error.NotWritable")
            }
            try await world.publish("gattway/chest-strap/control/set", #"{"value":{"x":1}}"#)
            try await world.observer.waitForMessage(on: "gattway/chest-strap/control/set/result", skipping: 1) {
                $0.contains("gattway.Error.InvalidPayload")
            }
            #expect(world.gattway.isRunning)
            // None of the refused commands reached the radio.
            #expect(try await world.control.writes("C4:7C:8D:6A:3E:11", uuid: "2A39").isEmpty)
            #expect(try await world.control.writes("C4:7C:8D:6A:3E:11", uuid: "2A37").isEmpty)
            try await world.publish("gattway/bridge/request/devices", #"{"transaction":42}"#)
            let response = try await world.observer.waitForMessage(on: "gattway/bridge/response/devices")
            #expect(response.payload.contains("\"transaction\":42"))
            #expect(response.payload.contains("\"name\":\"chest-strap\""))
        }
    }

    @Test func writeToADisconnectedDeviceFailsWithinTheRequestTimeout() async throws {
        try await withWorld { world in
            try await world.observer.waitForMessage(on: "gattway/lock/availability") { $0 == "online" }
            try await world.control.setConnectHang("D0:0D:10:C4:00:01", true)
            try await world.control.disconnect("D0:0D:10:C4:00:01")
            try await world.observer.waitForMessage(on: "gattway/lock/availability") { $0 == "offline" }
            let sent = ContinuousClock.now
            try await world.publish("gattway/lock/control/set", "unlock")
            let result = try await world.observer.waitForMessage(
                on: "gattway/lock/control/set/result", timeout: .seconds(20))
            #expect(result.payload.contains(#""ok":false"#))
            #expect(result.payload.contains("NotConnected"))
            // request_timeout is 3 s; allow generous slack for a loaded machine, but never a hang.
            #expect(ContinuousClock.now - sent < .seconds(15))
        }
    }

    @Test func deviceLossTurnsOfflineThenReconnectsAndNotificationsResume() async throws {
        try await withWorld { world in
            try await world.observer.waitForMessage(on: "gattway/chest-strap/availability") { $0 == "online" }
            try await world.control.disconnect("C4:7C:8D:6A:3E:11", reason: "timeout")
            try await world.observer.waitForMessage(on: "gattway/chest-strap/availability") { $0 == "offline" }
            try await world.observer.waitForMessage(on: "gattway/chest-strap/availability", skipping: 1) {
                $0 == "online"
            }
            let before = world.observer.messages(on: "gattway/chest-strap/heart_rate").count
            try await world.observer.waitForMessage(on: "gattway/chest-strap/heart_rate", skipping: before)
        }
    }

    @Test func survivesBluetoothdRestart() async throws {
        try await withWorld { world in
            try await world.observer.waitForMessage(on: "gattway/chest-strap/availability") { $0 == "online" }
            try await world.control.restartBluetoothd(downSeconds: 1)
            try await world.observer.waitForMessage(on: "gattway/chest-strap/availability") { $0 == "offline" }
            try await world.observer.waitForMessage(on: "gattway/chest-strap/availability", skipping: 1) {
                $0 == "online"
            }
            let before = world.observer.messages(on: "gattway/chest-strap/heart_rate").count
            try await world.observer.waitForMessage(on: "gattway/chest-strap/heart_rate", skipping: before)
            #expect(world.gattway.isRunning)
        }
    }

    @Test func survivesBrokerRestart() async throws {
        try await withWorld { world in
            try await world.observer.waitForMessage(on: "gattway/chest-strap/availability") { $0 == "online" }
            await world.observer.stop()
            await world.broker.stop()
            try await Task.sleep(for: .seconds(1))
            try await world.broker.start()
            let observer = try await MQTTObserver(port: world.broker.port, filters: ["gattway/#"])
            defer { Task { await observer.stop() } }
            try await observer.waitForMessage(on: "gattway/bridge/state", timeout: .seconds(60)) { $0 == "online" }
            try await observer.waitForMessage(on: "gattway/chest-strap/heart_rate", timeout: .seconds(30))
            // Commands work again: the bridge re-subscribed.
            try await MQTTObserver.publish(port: world.broker.port, topic: "gattway/lock/control/set", payload: "lock")
            try await observer.waitForMessage(on: "gattway/lock/control/set/result") { $0 == #"{"ok":true}"# }
            await observer.stop()
        }
    }

    @Test func sigtermPublishesOfflineAndDisconnectsDevices() async throws {
        try await withWorld { world in
            try await world.observer.waitForMessage(on: "gattway/chest-strap/availability") { $0 == "online" }
            try await world.observer.waitForMessage(on: "gattway/lock/availability") { $0 == "online" }
            let devices = ["C4:7C:8D:6A:3E:11", "D0:0D:10:C4:00:01"]
            for address in devices { #expect(try await world.control.isConnected(address), "\(address)") }
            world.gattway.send(SIGTERM)
            let status = await world.gattway.waitForExit(timeout: .seconds(20))
            #expect(status == 0)
            try await world.observer.waitForMessage(on: "gattway/bridge/state") { $0 == "offline" }
            try await world.observer.waitForMessage(on: "gattway/chest-strap/availability") { $0 == "offline" }
            try await world.observer.waitForMessage(on: "gattway/lock/availability") { $0 == "offline" }
            // bluetoothd keeps a link its client forgot; gattway has exited, so only its own Disconnect freed them.
            for address in devices { #expect(try await world.control.isConnected(address) == false, "\(address)") }
        }
    }

    @Test func lastWillAnnouncesOfflineWhenKilled() async throws {
        try await withWorld { world in
            try await world.observer.waitForMessage(on: "gattway/bridge/state") { $0 == "online" }
            world.gattway.send(SIGKILL)
            _ = await world.gattway.waitForExit()
            // The broker notices the dead connection and publishes the retained Last Will.
            try await world.observer.waitForMessage(on: "gattway/bridge/state", timeout: .seconds(90)) {
                $0 == "offline"
            }
        }
    }

    @Test func restartRestoresDevicesWithoutRepublishingUnchangedValues() async throws {
        try await withWorld { world in
            try await world.observer.waitForMessage(on: "gattway/lock/availability") { $0 == "online" }
            try await world.publish("gattway/lock/control/set", "lock")
            try await world.observer.waitForMessage(on: "gattway/lock/state") { $0 == "lock" }
            world.gattway.send(SIGTERM)
            #expect(await world.gattway.waitForExit(timeout: .seconds(20)) == 0)
            let state = try String(contentsOfFile: world.directory + "/state/central-state.json", encoding: .utf8)
            #expect(state.contains("D0:0D:10:C4:00:01"))
            let statesBefore = world.observer.messages(on: "gattway/lock/state").count
            let second = try world.restartGattway()
            defer { Task { await second.stop() } }
            try await world.observer.waitForMessage(on: "gattway/lock/availability", skipping: 2) { $0 == "online" }
            // The lock notifies its unchanged state again on reconnect; the retained topic is not re-flooded.
            try await world.control.notify(
                "D0:0D:10:C4:00:01", uuid: "0000fff2-0000-1000-8000-00805f9b34fb", Array("lock".utf8))
            try await world.control.notify(
                "D0:0D:10:C4:00:01", uuid: "0000fff2-0000-1000-8000-00805f9b34fb", Array("unlock".utf8))
            try await world.observer.waitForMessage(on: "gattway/lock/state", skipping: statesBefore) { $0 == "unlock" }
            let after = world.observer.messages(on: "gattway/lock/state").dropFirst(statesBefore).map(\.payload)
            #expect(after == ["unlock"])
            await second.stop()
        }
    }
}
