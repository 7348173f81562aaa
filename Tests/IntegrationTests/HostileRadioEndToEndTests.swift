import DBus
import Foundation
import TestWorld
import Testing

/// Hostile GATT values against the built binary, the simulator (`hostile-values.yaml`) and mosquitto, through both
/// notification paths: empty, 512-byte, every wrong length for the fixed-size codecs, invalid UTF-8. The process
/// stays up, what decodes is published in order, what does not is counted and stops nothing after it.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct HostileRadioEndToEndTests {
    enum NotifyPath: String, CaseIterable, Sendable {
        case acquireNotify, startNotify
    }

    static let address = "E0:BA:D0:00:00:01"
    static let strap = "C4:7C:8D:6A:3E:11"

    static let config = """
        bluetooth:
          adapter: hci0
          request_timeout: 3
          connect_timeout: 5
          reconnect: { initial: 0.2, max: 1 }
        devices:
          - name: hostile
            address: "\(address)"
            characteristics:
              - { name: u8, service: "FFE0", uuid: "FF01", notify: true, codec: uint8 }
              - { name: i16, service: "FFE0", uuid: "FF02", notify: true, codec: "int16le*0.01" }
              - { name: u24, service: "FFE0", uuid: "FF03", notify: true, codec: uint24be }
              - { name: u32, service: "FFE0", uuid: "FF04", notify: true, codec: uint32le }
              - { name: i64, service: "FFE0", uuid: "FF05", notify: true, codec: int64be }
              - { name: f32, service: "FFE0", uuid: "FF06", notify: true, codec: float32le }
              - { name: f64, service: "FFE0", uuid: "FF07", notify: true, codec: float64be }
              - { name: text, service: "FFE0", uuid: "FF08", notify: true, codec: utf8 }
              - { name: blob, service: "FFE0", uuid: "FF09", notify: true, codec: hex }
              - { name: battery, service: "180F", uuid: "2A19", notify: true, codec: battery_level }
              - { name: temperature, service: "181A", uuid: "2A6E", notify: true, codec: temperature }
              - { name: humidity, service: "181A", uuid: "2A6F", notify: true, codec: humidity }
              - { name: heart_rate, service: "180D", uuid: "2A37", notify: true, codec: heart_rate_measurement }
        """

    /// One characteristic's notifications: what is sent, in order, and what must be published, in order.
    struct Case: Sendable {
        let name: String
        let uuid: String
        let sent: [[UInt8]]
        let published: [String]
        let refused: Int
    }

    /// A fixed-size codec gets every length from 0 to one past its size except its own, a 512-byte value, the
    /// `extra` values (invalid although of the right size), then one good value.
    static func fixedSize(
        _ name: String, _ uuid: String, size: Int, extra: [[UInt8]] = [], good: [UInt8], _ text: String
    ) -> Case {
        let wrongLengths = (0...(size + 1)).filter { $0 != size }.map { [UInt8](repeating: 0xA5, count: $0) }
        let refused = wrongLengths + [[UInt8](repeating: 0x5A, count: 512)] + extra
        return Case(name: name, uuid: uuid, sent: refused + [good], published: [text], refused: refused.count)
    }

    static let invalidUTF8: [[UInt8]] = [
        [0xC3, 0x28], [0xFF], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0x61, 0x80],
    ]
    static let long = [UInt8](repeating: 0x61, count: 512)

    static let cases: [Case] = [
        fixedSize("u8", "FF01", size: 1, good: [0x2A], "42"),
        fixedSize("i16", "FF02", size: 2, good: [0x39, 0x30], "123.45"),
        fixedSize("u24", "FF03", size: 3, good: [0x01, 0x00, 0x00], "65536"),
        fixedSize("u32", "FF04", size: 4, good: [0x01, 0x00, 0x00, 0x00], "1"),
        fixedSize("i64", "FF05", size: 8, good: [UInt8](repeating: 0xFF, count: 8), "-1"),
        fixedSize("f32", "FF06", size: 4, good: [0x00, 0x00, 0xC0, 0x3F], "1.5"),
        fixedSize("f64", "FF07", size: 8, good: [0x40, 0x04, 0, 0, 0, 0, 0, 0], "2.5"),
        fixedSize("battery", "2A19", size: 1, extra: [[101], [0xFF]], good: [0x55], "85"),
        fixedSize("temperature", "2A6E", size: 2, extra: [[0x00, 0x80]], good: [0x0A, 0x09], "23.14"),
        fixedSize("humidity", "2A6F", size: 2, extra: [[0xFF, 0xFF]], good: [0xE1, 0x10], "43.21"),
        // An empty value is a value: an empty string for utf8 and hex.
        Case(
            name: "text", uuid: "FF08", sent: invalidUTF8 + [[], long, Array("ok".utf8)],
            published: ["", String(repeating: "a", count: 512), "ok"], refused: invalidUTF8.count),
        Case(
            name: "blob", uuid: "FF09", sent: [[], long, [0x0A, 0x0B, 0x0C]],
            published: ["", String(repeating: "61", count: 512), "0a0b0c"], refused: 0),
        Case(
            name: "heart_rate", uuid: "2A37", sent: [[], [0x00], [], [0x00, 0x50]], published: [#"{"bpm":80}"#],
            refused: 3),
    ]

    private static func counters(_ payload: String) -> [String: Double] {
        let json = try? JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any]
        return (json?["counters"] as? [String: Any])?.compactMapValues { ($0 as? NSNumber)?.doubleValue } ?? [:]
    }

    private func withWorld(_ path: NotifyPath, _ body: (CentralWorld) async throws -> Void) async throws {
        let world = try await CentralWorld(
            scenario: "hostile-values.yaml", config: Self.config, extraMQTT: "  metrics_interval: 1"
        ) { control in
            guard path == .startNotify else { return }
            try await control.call(
                "InjectError",
                [
                    .string("AcquireNotify"), .string("org.bluez.Error.NotSupported"),
                    .string("Operation is not supported"), .uint32(0),
                ])
        }
        try await world.run(body)
    }

    @Test(arguments: NotifyPath.allCases)
    func hostileValuesAreCountedAndNeverStopTheValuesAfterThem(path: NotifyPath) async throws {
        try await withWorld(path) { world in
            try await world.observer.waitForMessage(on: "gattway/hostile/availability") { $0 == "online" }
            for testCase in Self.cases {
                for value in testCase.sent {
                    let delivered = try await world.control.call(
                        "Notify", [.string(Self.address), .string(testCase.uuid), .bytes(value)])
                    #expect(delivered.first?.bool == true, "\(testCase.name): not subscribed")
                }
            }
            for testCase in Self.cases {
                let topic = "gattway/hostile/\(testCase.name)"
                try await world.observer.waitForMessage(on: topic) { $0 == testCase.published.last }
                #expect(world.observer.messages(on: topic).map(\.payload) == testCase.published, "\(topic)")
            }
            let refused = Self.cases.map(\.refused).reduce(0, +)
            let snapshot = try await world.observer.waitForMessage(on: "gattway/bridge/metrics") { payload in
                (Self.counters(payload)["gattway.central.decode_failures"] ?? 0) >= Double(refused)
            }
            let counters = Self.counters(snapshot.payload)
            #expect(counters["gattway.central.decode_failures"] == Double(refused), "\(counters)")
            // An empty datagram is a value, never taken for the socket's end.
            #expect((counters["gattway.central.notify_socket_hangups"] ?? 0) == 0, "\(counters)")
            #expect(world.observer.messages(on: "gattway/hostile/availability").last?.payload == "online")
            #expect(world.gattway.isRunning)
            let acquired = try await world.control.counters()["calls.GattCharacteristic1.AcquireNotify"]?.uint64 ?? 0
            #expect(path == .startNotify || acquired == UInt64(Self.cases.count), "sockets were acquired once each")
        }
    }

    /// bluetoothd closing a notification socket while the device stays connected is a real hang-up: Gattway takes
    /// the subscription again, and the values after it are published.
    @Test func aNotificationSocketClosedByBluetoothdIsAcquiredAgain() async throws {
        let world = try await CentralWorld(scenario: "demo.yaml", config: Configs.strapAndLock)
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/chest-strap/availability") { $0 == "online" }
            // The lock acquires its socket too: count from when both are subscribed.
            try await world.observer.waitForMessage(on: "gattway/lock/availability") { $0 == "online" }
            let before = try await world.control.counters()["calls.GattCharacteristic1.AcquireNotify"]?.uint64 ?? 0
            let closed = try await world.control.call("CloseNotifySocket", [.string(Self.strap), .string("2A37")])
            #expect(closed.first?.bool == true)
            // The strap's notifications are not delivered until Gattway has subscribed again.
            let deadline = ContinuousClock.now + .seconds(20)
            var delivered = false
            while !delivered, ContinuousClock.now < deadline {
                let reply = try await world.control.call(
                    "Notify", [.string(Self.strap), .string("2A37"), .bytes([0x00, 0xB4])])
                delivered = reply.first?.bool ?? false
                if !delivered { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(delivered, "the strap's notifications were never subscribed again")
            try await world.observer.waitForMessage(on: "gattway/chest-strap/heart_rate") { $0 == #"{"bpm":180}"# }
            let after = try await world.control.counters()["calls.GattCharacteristic1.AcquireNotify"]?.uint64 ?? 0
            #expect(after == before + 1, "AcquireNotify again, not StartNotify")
            #expect(world.observer.messages(on: "gattway/chest-strap/availability").last?.payload == "online")
        }
    }
}
