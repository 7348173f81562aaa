import DBus
import Foundation
import Logging
import TestWorld
import Testing

/// The local peripheral's less common paths end to end: StartNotify, long values and writes, advertising
/// control, bluetoothd restarts and the advertisement budget check.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct PeripheralProtocolTests {
    private func withWorld(maxConnections: Int? = nil, _ body: (PeripheralWorld) async throws -> Void) async throws {
        try await PeripheralWorld(maxConnections: maxConnections).run(body)
    }

    /// The unique bus name of gattway's registered application (the owner bluetoothd calls).
    private func applicationOwner(_ world: PeripheralWorld) async throws -> String {
        let json = try await world.centralCall("GetApplications", []).first?.string ?? "[]"
        let apps = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])
        return try #require(apps.first?["owner"] as? String)
    }

    /// Only bluetoothd (the owner of org.bluez) may call what gattway exports: any other local client is refused
    /// and learns nothing, while bluetoothd's own calls keep working.
    @Test func aClientOtherThanBluetoothdIsRefused() async throws {
        try await withWorld { world in
            try await world.waitForApplication()
            try await world.publish("test/tx", "secret", retain: true)
            let owner = try await applicationOwner(world)
            let stranger = try await DBusConnection.connect(
                to: .address(world.simulator.busAddress), name: "test-stranger", logger: Logger(label: "test"))
            let calls: [(path: String, interface: String, method: String, arguments: [DBusValue])] = [
                (
                    "/org/gattway/peripheral/service0/char0", "org.bluez.GattCharacteristic1", "ReadValue",
                    [.stringVariantDictionary([:])]
                ),
                ("/org/gattway/peripheral/service0/char0", "org.bluez.GattCharacteristic1", "StartNotify", []),
                ("/org/gattway/peripheral", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects", []),
                (
                    "/org/gattway/peripheral/service0/char0", "org.freedesktop.DBus.Properties", "GetAll",
                    [.string("org.bluez.GattCharacteristic1")]
                ),
            ]
            for call in calls {
                let error = await #expect(throws: DBusError.self, "\(call.method)") {
                    _ = try await stranger.call(
                        destination: owner, path: call.path, interface: call.interface, method: call.method,
                        arguments: call.arguments, timeout: .seconds(10))
                }
                #expect(error?.name == DBusError.accessDenied, "\(call.method)")
            }
            await stranger.close()
            // bluetoothd itself still reads the value for a central.
            try await world.connectCentral()
            let deadline = ContinuousClock.now + .seconds(20)
            var value: [UInt8] = []
            while ContinuousClock.now < deadline && value != Array("secret".utf8) {
                value =
                    try await world.centralCall(
                        "ReadLongValue", [.string(PeripheralWorld.central), .string(PeripheralWorld.tx)]
                    ).last?.bytes ?? []
                if value != Array("secret".utf8) { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(value == Array("secret".utf8))
        }
    }

    @Test func aLongValueIsReadWholeAndNotifiedCutToTheMTU() async throws {
        try await withWorld { world in
            try await world.waitForApplication()
            let long = String(repeating: "abcdefghij", count: 20)
            try await world.publish("test/tx", long, retain: true)
            try await world.connectCentral()
            _ = try await world.centralCall(
                "WriteCCC", [.string(PeripheralWorld.central), .string(PeripheralWorld.tx), .uint16(1)])
            let deadline = ContinuousClock.now + .seconds(20)
            var whole: [UInt8] = []
            while ContinuousClock.now < deadline && whole.count < 200 {
                whole =
                    try await world.centralCall(
                        "ReadLongValue", [.string(PeripheralWorld.central), .string(PeripheralWorld.tx)]
                    ).last?.bytes ?? []
                if whole.count < 200 { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(whole == Array(long.utf8))
            try await world.control.waitForCounter("server.notify_acquired", atLeast: 1)
            try await world.publish("test/tx", long)
            let received = try await world.waitForReceived(count: 1)
            // MTU 64 in PeripheralWorld: a notification carries at most 61 bytes, and each cut is counted.
            #expect(received == [Array(long.utf8.prefix(61))])
            try await world.observer.waitForMessage(on: "gattway/peripheral/status") { payload in
                let json = try? JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any]
                let tx = (json?["characteristics"] as? [String: Any])?["tx"] as? [String: Any]
                return ((tx?["truncated"] as? NSNumber)?.intValue ?? 0) >= 1
            }
        }
    }

    @Test func aPreparedWriteArrivesAsOneMessage() async throws {
        try await withWorld { world in
            try await world.waitForApplication()
            try await world.connectCentral()
            let value = [UInt8](0..<60)
            let code = try await world.centralCall(
                "WriteValue",
                [
                    .string(PeripheralWorld.central), .string(PeripheralWorld.rx), .bytes(value), .string("reliable"),
                    .uint16(0),
                ])
            #expect(code.first?.byte == 0)
            let hex = value.map { String(format: "%02x", $0) }.joined()
            try await world.observer.waitForMessage(on: "test/rx") { $0 == hex }
            #expect(world.observer.messages(on: "test/rx").count == 1)
            // A write that grows past max_length (64) is refused as a whole.
            let refused = try await world.centralCall(
                "WriteValue",
                [
                    .string(PeripheralWorld.central), .string(PeripheralWorld.rx),
                    .bytes([UInt8](repeating: 9, count: 70)),
                    .string("prepared"), .uint16(0),
                ])
            #expect(refused.first?.byte == 0x0D)
            // A marker written afterwards travels the same path: once it is there, a message from the refused
            // write would have arrived before it.
            _ = try await world.centralCall(
                "WriteValue",
                [
                    .string(PeripheralWorld.central), .string(PeripheralWorld.rx), .bytes([0xEE]), .string("request"),
                    .uint16(0),
                ])
            try await world.observer.waitForMessage(on: "test/rx") { $0 == "ee" }
            #expect(world.observer.messages(on: "test/rx").map(\.payload) == [hex, "ee"])
        }
    }

    @Test func advertisingIsSwitchedOffAndOnOverMQTT() async throws {
        try await withWorld { world in
            try await world.waitForApplication()
            try await waitForAdvertisements(world, count: 1)
            try await world.publish("gattway/bridge/request/advertise", #"{"enabled":false,"transaction":"a-1"}"#)
            let off = try await world.observer.waitForMessage(on: "gattway/bridge/response/advertise")
            #expect(off.payload.contains(#""ok":true"#) && off.payload.contains(#""transaction":"a-1""#))
            try await waitForAdvertisements(world, count: 0)
            try await world.publish("gattway/bridge/request/advertise", #"{"enabled":true,"transaction":7}"#)
            let on = try await world.observer.waitForMessage(on: "gattway/bridge/response/advertise", skipping: 1)
            #expect(on.payload.contains(#""enabled":true"#) && on.payload.contains(#""transaction":7"#))
            try await waitForAdvertisements(world, count: 1)
            let status = try await world.observer.waitForMessage(on: "gattway/peripheral/status") {
                $0.contains(#""advertising":true"#)
            }
            #expect(status.payload.contains(#""tx":{"#))
        }
    }

    @Test func advertisingStopsWhileTheMaximumOfCentralsIsConnected() async throws {
        try await withWorld(maxConnections: 1) { world in
            try await world.waitForApplication()
            try await waitForAdvertisements(world, count: 1)
            // A central connects and reads (no notification socket): it counts once the application knows it.
            try await world.connectCentral()
            _ = try await world.centralCall(
                "ReadValue", [.string(PeripheralWorld.central), .string(PeripheralWorld.tx), .uint16(0)])
            try await waitForAdvertisements(world, count: 0)
            try await world.observer.waitForMessage(on: "gattway/peripheral/status") {
                $0.contains(#""centrals":1"#) && $0.contains(#""advertising":false"#)
            }
            // It leaves: bluetoothd reports it disconnected and advertising resumes.
            _ = try await world.centralCall("Disconnect", [.string(PeripheralWorld.central)])
            try await waitForAdvertisements(world, count: 1)
            try await world.observer.waitForMessage(on: "gattway/peripheral/status") {
                $0.contains(#""centrals":0"#) && $0.contains(#""advertising":true"#)
            }
        }
    }

    @Test func aValueFromANonRetainedMessageSurvivesARestart() async throws {
        try await withWorld { world in
            try await world.waitForApplication()
            try await world.publish("test/tx", "kept-across-restarts")
            try await world.connectCentral()
            try await readEventually(world, equals: "kept-across-restarts")
            _ = try await world.centralCall("Disconnect", [.string(PeripheralWorld.central)])
            await world.gattway.stop()
            // The old process's application went with it, so this waits for the new one's.
            let restarted = try world.restartGattway()
            try await world.waitForApplication()
            try await world.connectCentral()
            try await readEventually(world, equals: "kept-across-restarts")
            #expect(
                restarted.errorOutput.contains("peripheral.values.restored"), "\(restarted.errorOutput.suffix(2000))")
            await restarted.stop()
        }
    }

    /// Reads tx through the simulated central until it holds `expected` (values reach the application shortly
    /// after their MQTT message).
    private func readEventually(_ world: PeripheralWorld, equals expected: String) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        var value: [UInt8] = []
        while ContinuousClock.now < deadline {
            value =
                try await world.centralCall(
                    "ReadValue", [.string(PeripheralWorld.central), .string(PeripheralWorld.tx), .uint16(0)]
                ).last?.bytes ?? []
            if value == Array(expected.utf8) { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw TestWorldError("tx read \(String(decoding: value, as: UTF8.self)), expected \(expected)")
    }

    @Test func theApplicationIsRegisteredAgainAfterBluetoothdRestarts() async throws {
        try await withWorld { world in
            try await world.waitForApplication()
            try await world.control.restartBluetoothd(downSeconds: 1)
            try await world.waitForApplication()
            try await waitForAdvertisements(world, count: 1)
            try await world.connectCentral()
            try await world.publish("test/tx", "after-restart", retain: true)
            let deadline = ContinuousClock.now + .seconds(20)
            var value: [UInt8] = []
            while ContinuousClock.now < deadline && value != Array("after-restart".utf8) {
                value =
                    try await world.centralCall(
                        "ReadValue", [.string(PeripheralWorld.central), .string(PeripheralWorld.tx), .uint16(0)]
                    ).last?.bytes ?? []
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(value == Array("after-restart".utf8))
        }
    }

    @Test func anOversizedAdvertisementIsAConfigurationErrorWithTheByteCount() async throws {
        let directory = try makeTemporaryDirectory("gattway-advert")
        let path = directory + "/config.yaml"
        try """
        mqtt: { url: "mqtt://127.0.0.1:1883" }
        peripheral:
          advertise:
            local_name: a-name-that-is-rather-long
            service_uuids: ["\(PeripheralWorld.service)"]
            manufacturer_data: { company_id: 0x0059, data: "00112233445566778899" }
          services:
            - uuid: "\(PeripheralWorld.service)"
              characteristics:
                - { uuid: "\(PeripheralWorld.tx)", flags: [read], source_topic: test/tx }
        """.write(toFile: path, atomically: true, encoding: .utf8)
        let result = try await GattwayBinary.run(["check-config", path])
        #expect(result.status != 0)
        #expect(result.stderr.contains("bytes"), "stderr: \(result.stderr)")
        #expect(result.stderr.contains("over the 31-byte legacy limit"), "stderr: \(result.stderr)")
    }

    private func waitForAdvertisements(_ world: PeripheralWorld, count: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        var seen = -1
        while ContinuousClock.now < deadline {
            let json = try await world.centralCall("GetAdvertisements", []).first?.string ?? "[]"
            seen = (try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [Any])?.count ?? -1
            if seen == count { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw TestWorldError("expected \(count) advertisements, saw \(seen)")
    }
}
