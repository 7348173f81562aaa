import DBus
import TestWorld
import Testing

@Suite("Signals read in place", .timeLimit(.minutes(5)))
struct DBusSignalMessageTests {
    private static let gatt = "org.bluez.GattCharacteristic1"

    private static func changed(
        _ interface: String, _ entries: [(String, DBusValue)],
        invalidated: DBusValue = .array(elementSignature: "s", [])
    ) -> [DBusValue] {
        [
            .string(interface),
            .dictionary(
                keySignature: "s", valueSignature: "v",
                entries.map {
                    DBusDictEntry(key: .string($0.0), value: .variant($0.1))
                }),
            invalidated,
        ]
    }

    /// Each shape of PropertiesChanged, with the bytes the in-place reader must take from it (nil: not a lone
    /// Value change, left to the object tree).
    private static let cases: [(arguments: [DBusValue], expected: [UInt8]?)] = [
        (changed(gatt, [("Value", .byteArray([0x00, 0x48]))]), [0x00, 0x48]),
        (changed(gatt, [("Value", .byteArray([]))]), []),
        (changed(gatt, [("Value", .byteArray(Array(0...255)))]), Array(0...255)),
        (changed(gatt, [("Value", .byteArray([1])), ("Notifying", .bool(true))]), nil),
        (changed(gatt, [("Notifying", .bool(true)), ("Value", .byteArray([1]))]), nil),
        (
            changed(gatt, [("Value", .byteArray([1]))], invalidated: .array(elementSignature: "s", [.string("Flags")])),
            nil
        ),
        (changed(gatt, [("Notifying", .bool(false))]), nil),
        (changed(gatt, [("Value", .string("not bytes"))]), nil),
        (changed(gatt, [("Value", .array(elementSignature: "q", [.uint16(1)]))]), nil),
        (changed(gatt, []), nil),
        (changed("org.bluez.Device1", [("Value", .byteArray([7]))]), nil),
        (changed(gatt, [("Value", .byteArray([1]))]) + [.string("extra")], nil),
        (Array(changed(gatt, [("Value", .byteArray([1]))]).prefix(2)), nil),
        ([.string(gatt)], nil),
        ([], nil),
    ]

    @Test("a lone byte-array Value change is read in place, every other shape is declined, as the decoded reading does")
    func loneValueInPlace() async throws {
        try await DBusTestBus.with { world in
            let (readings, continuation) = AsyncStream.makeStream(of: (String, [UInt8]?, [UInt8]?).self)
            _ = try await world.client.tapMessages(
                matching: DBusMatchRule(
                    sender: world.server.uniqueName, interface: "org.freedesktop.DBus.Properties",
                    member: "PropertiesChanged")
            ) { message in
                let inPlace = message.loneByteArrayChange(ofInterface: Self.gatt, property: "Value")
                continuation.yield((message.path, inPlace, Self.decodedLoneValue(message.decoded)))
                return true
            }
            for (index, shape) in Self.cases.enumerated() {
                try await world.server.emitSignal(
                    path: "/org/bluez/hci0/dev_C4_7C_8D_6A_3E_11/service000c/char\(index)",
                    interface: "org.freedesktop.DBus.Properties", name: "PropertiesChanged", arguments: shape.arguments)
            }
            let received = try await withDeadline(.seconds(20), "\(Self.cases.count) tapped signals") {
                var received: [(String, [UInt8]?, [UInt8]?)] = []
                for await reading in readings {
                    received.append(reading)
                    if received.count == Self.cases.count { break }
                }
                return received
            }
            for (index, (path, inPlace, decoded)) in received.enumerated() {
                #expect(path == "/org/bluez/hci0/dev_C4_7C_8D_6A_3E_11/service000c/char\(index)")
                #expect(inPlace == Self.cases[index].expected, "case \(index)")
                #expect(inPlace == decoded, "case \(index): the in-place reading differs from the decoded one")
            }
        }
    }

    /// The general reading: every argument decoded into values first.
    private static func decodedLoneValue(_ signal: DBusSignal) -> [UInt8]? {
        guard signal.arguments.count == 3, signal.arguments[0].string == gatt,
            signal.arguments[2].stringArray?.isEmpty ?? false,
            let entries = signal.arguments[1].dictionaryEntries, entries.count == 1,
            entries[0].key.string == "Value"
        else { return nil }
        return entries[0].value.bytes
    }

    @Test("rules are matched in place: path_namespace takes the namespace and what lies below it, not a longer name")
    func pathNamespaceInPlace() async throws {
        try await DBusTestBus.with { world in
            // A broader stream makes the bus deliver every signal of the server, so the tap's own rule must filter.
            let everything = try await world.client.signals(matching: DBusMatchRule(sender: world.server.uniqueName))
            let (paths, continuation) = AsyncStream.makeStream(of: String.self)
            _ = try await world.client.tapMessages(
                matching: DBusMatchRule(sender: world.server.uniqueName, pathNamespace: "/org/gattway/a")
            ) { message in
                continuation.yield(message.path)
                return true
            }
            for path in ["/org/gattway/ab", "/org/gattway/a", "/org/gattway", "/org/gattway/a/b/c", "/org/gattway/b"] {
                try await world.server.emitSignal(path: path, interface: "org.gattway.Test", name: "Tick")
            }
            // A last signal every tap takes, so the wait ends on an event rather than on a quiet period.
            try await world.server.emitSignal(path: "/org/gattway/a/end", interface: "org.gattway.Test", name: "Tick")
            let seen = try await withDeadline(.seconds(20), "the tapped paths") {
                var seen: [String] = []
                for await path in paths {
                    seen.append(path)
                    if path == "/org/gattway/a/end" { break }
                }
                return seen
            }
            #expect(seen == ["/org/gattway/a", "/org/gattway/a/b/c", "/org/gattway/a/end"])
            // The signals the tap declined by its rule went to the stream.
            let streamed = try await DBusSignalTests.collect(3, from: everything)
            #expect(streamed.map(\.path) == ["/org/gattway/ab", "/org/gattway", "/org/gattway/b"])
        }
    }
}
