import DBus
import TestWorld
import Testing

@Suite("PropertiesChanged of a byte array, written directly", .timeLimit(.minutes(5)))
struct DBusByteArrayChangeTests {
    private static let gatt = "org.bluez.GattCharacteristic1"
    private static let values: [[UInt8]] = [[], [0x00, 0x48], Array(0...255)]

    @Test("the signal is the one propertiesChanged emits, and reads back as a lone Value change")
    func sameSignalAsTheGeneralWay() async throws {
        try await DBusTestBus.with { world in
            let (signals, continuation) = AsyncStream.makeStream(of: (DBusSignal, [UInt8]?).self)
            _ = try await world.client.tapMessages(
                matching: DBusMatchRule(
                    sender: world.server.uniqueName, interface: "org.freedesktop.DBus.Properties",
                    member: "PropertiesChanged")
            ) { message in
                continuation.yield(
                    (message.decoded, message.loneByteArrayChange(ofInterface: Self.gatt, property: "Value")))
                return true
            }
            for value in Self.values {
                try await world.server.emitByteArrayChange(
                    path: "/org/gattway/peripheral/service0/char0", interface: Self.gatt, property: "Value",
                    value: value)
                try await world.server.propertiesChanged(
                    path: "/org/gattway/peripheral/service0/char0", interface: Self.gatt,
                    changed: ["Value": .bytes(value)])
            }
            let received = try await withDeadline(.seconds(20), "\(2 * Self.values.count) tapped signals") {
                var received: [(DBusSignal, [UInt8]?)] = []
                for await signal in signals {
                    received.append(signal)
                    if received.count == 2 * Self.values.count { break }
                }
                return received
            }
            for (index, value) in Self.values.enumerated() {
                let (direct, directValue) = received[2 * index]
                let (general, _) = received[2 * index + 1]
                #expect(direct.path == "/org/gattway/peripheral/service0/char0")
                #expect(direct.arguments == general.arguments, "value \(index)")
                #expect(directValue == value, "value \(index)")
            }
        }
    }

    @Test("values from one origin arrive each as sent, whether a copy of the last signal carries them or not")
    func valuesFromOneOriginArriveAsSent() async throws {
        // Same lengths in a row (copies of the last signal, their bytes overwritten), a change of length, of
        // property, an empty value, and a value equal to the one the template was built from.
        let sent: [(String, [UInt8])] = [
            ("Value", [1, 2]), ("Value", [3, 4]), ("Value", [5, 6]), ("Value", [7]), ("Value", [8]),
            ("Other", [9]), ("Value", [10]), ("Value", []), ("Value", []), ("Value", [1, 2]),
            ("Value", Array(0...255)), ("Value", Array((0...255).reversed())),
        ]
        try await DBusTestBus.with { world in
            let (received, continuation) = AsyncStream.makeStream(of: [String: DBusValue].self)
            _ = try await world.client.tapMessages(
                matching: DBusMatchRule(
                    sender: world.server.uniqueName, interface: "org.freedesktop.DBus.Properties",
                    member: "PropertiesChanged")
            ) { message in
                let arguments = message.decoded.arguments
                continuation.yield(arguments.count == 3 ? arguments[1].stringKeyedDictionary ?? [:] : [:])
                return true
            }
            let origin = try DBusSignalOrigin(path: "/org/gattway/peripheral/service0/char1", interface: Self.gatt)
            for (property, value) in sent {
                try await world.server.emitByteArrayChange(from: origin, property: property, value: value)
            }
            let changes = try await withDeadline(.seconds(20), "\(sent.count) tapped signals") {
                var changes: [[String: DBusValue]] = []
                for await change in received {
                    changes.append(change)
                    if changes.count == sent.count { break }
                }
                return changes
            }
            for (index, (property, value)) in sent.enumerated() {
                #expect(changes[index].keys.sorted() == [property], "signal \(index)")
                #expect(changes[index][property]?.variantValue.bytes == value, "signal \(index)")
            }
        }
    }

    @Test("an invalid object path is refused, not sent")
    func invalidPathIsRefused() async throws {
        try await DBusTestBus.with { world in
            await #expect(throws: DBusError.self) {
                try await world.server.emitByteArrayChange(
                    path: "not/a/path", interface: Self.gatt, property: "Value", value: [1])
            }
        }
    }

    @Test("a signal origin is checked once, when made: an invalid path or interface is refused there")
    func signalOriginChecksItsNames() throws {
        #expect(throws: DBusError.self) { try DBusSignalOrigin(path: "not/a/path", interface: Self.gatt) }
        #expect(throws: DBusError.self) { try DBusSignalOrigin(path: "/a/b", interface: "NoDots") }
        #expect(throws: DBusError.self) { try DBusSignalOrigin(path: "/a\u{0}b", interface: Self.gatt) }
        let origin = try DBusSignalOrigin(path: "/org/gattway/peripheral/service0/char0", interface: Self.gatt)
        #expect(origin.path == "/org/gattway/peripheral/service0/char0" && origin.interface == Self.gatt)
    }
}
