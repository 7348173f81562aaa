import DBus
import TestWorld
import Testing

@Suite("A boolean property change read in place", .timeLimit(.minutes(5)))
struct DBusSignalMessageBooleanTests {
    private static let device = "org.bluez.Device1"

    private static func changed(_ interface: String, _ entries: [(String, DBusValue)]) -> [DBusValue] {
        [
            .string(interface),
            .dictionary(
                keySignature: "s", valueSignature: "v",
                entries.map { DBusDictEntry(key: .string($0.0), value: .variant($0.1)) }),
            .array(elementSignature: "s", []),
        ]
    }

    /// Each shape of PropertiesChanged, with what the reader must find for Device1's `Connected`.
    private static let cases: [(arguments: [DBusValue], expected: Bool?)] = [
        (changed(device, [("Connected", .bool(false))]), false),
        (changed(device, [("Connected", .bool(true))]), true),
        (changed(device, [("RSSI", .int16(-60)), ("Connected", .bool(false)), ("Paired", .bool(true))]), false),
        (changed(device, [("RSSI", .int16(-60))]), nil),
        (changed(device, []), nil),
        (changed(device, [("Connected", .string("no"))]), nil),
        (changed("org.bluez.GattCharacteristic1", [("Connected", .bool(false))]), nil),
        ([.string(device)], nil),
        ([], nil),
    ]

    @Test("Connected is found among other changes; other shapes, types and interfaces give nothing")
    func connectedInPlace() async throws {
        try await DBusTestBus.with { world in
            let (readings, continuation) = AsyncStream.makeStream(of: Bool?.self)
            _ = try await world.client.tapMessages(
                matching: DBusMatchRule(
                    sender: world.server.uniqueName, interface: "org.freedesktop.DBus.Properties",
                    member: "PropertiesChanged")
            ) { message in
                continuation.yield(message.changedBoolean(ofInterface: Self.device, property: "Connected"))
                return true
            }
            for (index, shape) in Self.cases.enumerated() {
                try await world.server.emitSignal(
                    path: "/org/bluez/hci0/dev_C4_7C_8D_6A_3E_\(10 + index)",
                    interface: "org.freedesktop.DBus.Properties", name: "PropertiesChanged", arguments: shape.arguments)
            }
            let received = try await withDeadline(.seconds(20), "\(Self.cases.count) tapped signals") {
                var received: [Bool?] = []
                for await reading in readings {
                    received.append(reading)
                    if received.count == Self.cases.count { break }
                }
                return received
            }
            #expect(received == Self.cases.map(\.expected))
        }
    }
}
