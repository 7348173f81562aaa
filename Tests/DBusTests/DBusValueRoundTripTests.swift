import DBus
import Synchronization
import Testing

@Suite("D-Bus values round trip through a real bus", .timeLimit(.minutes(5)))
struct DBusValueRoundTripTests {
    static let samples: [DBusValue] = [
        .byte(0xfe), .bool(true), .bool(false), .int16(-1234), .uint16(65000), .int32(-7_000_000),
        .uint32(4_000_000_000), .int64(-9_000_000_000_000), .uint64(18_000_000_000_000_000_000), .double(3.25),
        .string("héllo ✓"), .string(""), .objectPath("/org/bluez/hci0/dev_AA_BB"), .signature("a{sv}"),
        .bytes([]), .bytes([0, 1, 2, 255]),
        .array(elementSignature: "s", []),
        .array(
            elementSignature: "ai",
            [.array(elementSignature: "i", [.int32(1), .int32(2)]), .array(elementSignature: "i", [])]),
        .uint16VariantDictionary([:]),
        .uint16VariantDictionary([0x004c: .bytes([2, 21]), 0x0059: .bytes([])]),
        .structure([.int64(1), .uint64(2), .double(-0.5), .signature("g")]),
        .variant(.variant(.string("deep"))),
        .array(elementSignature: "(ii)", []),
        managedObjectsShape,
    ]

    static let managedObjectsShape: DBusValue = .dictionary(
        keySignature: "o", valueSignature: "a{sa{sv}}",
        [
            DBusDictEntry(
                key: .objectPath("/org/bluez/hci0"),
                value: .dictionary(
                    keySignature: "s", valueSignature: "a{sv}",
                    [
                        DBusDictEntry(
                            key: .string("org.bluez.Adapter1"),
                            value: .stringVariantDictionary([
                                "Powered": .bool(true), "Address": .string("00:11:22:33:44:55"),
                                "UUIDs": .stringArray(["180d"]),
                            ])),
                        DBusDictEntry(
                            key: .string("org.freedesktop.DBus.Properties"), value: .stringVariantDictionary([:])),
                    ])),
            DBusDictEntry(
                key: .objectPath("/org/bluez/hci0/dev_C4"),
                value: .dictionary(keySignature: "s", valueSignature: "a{sv}", [])),
        ])

    @Test("every type comes back equal, one argument per call")
    func everyTypeRoundTrips() async throws {
        try await DBusTestBus.with { world in
            try await world.server.export(
                path: "/org/gattway/Test", interfaces: [DBusInterface(name: "org.gattway.Test", methods: [echoMethod])])
            for sample in Self.samples {
                let reply = try await world.call("Echo", [sample])
                #expect(reply == [sample], "signature \(sample.signature)")
                #expect(reply.first?.signature == sample.signature)
            }
        }
    }

    @Test("all types together in one message come back in order")
    func manyArgumentsRoundTrip() async throws {
        try await DBusTestBus.with { world in
            try await world.server.export(
                path: "/org/gattway/Test", interfaces: [DBusInterface(name: "org.gattway.Test", methods: [echoMethod])])
            #expect(try await world.call("Echo", Self.samples) == Self.samples)
        }
    }

    @Test("a value that does not match its declared type is refused before it reaches libdbus")
    func mismatchedValuesAreRefused() async throws {
        try await DBusTestBus.with { world in
            let calls = Mutex(0)
            let countingEcho = DBusMethod(
                name: "Echo",
                handler: .sync { call in
                    calls.withLock { $0 += 1 }
                    return call.arguments
                })
            try await world.server.export(
                path: "/org/gattway/Test",
                interfaces: [DBusInterface(name: "org.gattway.Test", methods: [countingEcho])])
            let malformed: [DBusValue] = [
                .array(elementSignature: "s", [.int32(1)]), .objectPath("not a path"), .structure([]),
            ]
            for value in malformed {
                let error = await #expect(throws: DBusError.self, "\(value)") {
                    _ = try await world.call("Echo", [value])
                }
                #expect(error?.name == DBusError.invalidArgs, "\(value): \(String(describing: error))")
            }
            // The object is there and the connection still works: a well-formed call gets through, the only one.
            #expect(try await world.call("Echo", [.string("after")]) == [.string("after")])
            #expect(calls.withLock { $0 } == 1)
        }
    }

    @Test("accessors look through variants and dictionaries")
    func accessorsUnwrap() {
        let properties = DBusValue.stringVariantDictionary(["RSSI": .int16(-60), "Name": .string("strap")])
        let dictionary = properties.stringKeyedDictionary
        #expect(dictionary?["RSSI"]?.int16 == -60)
        #expect(dictionary?["Name"]?.string == "strap")
        #expect(DBusValue.variant(.variant(.bytes([1, 2]))).bytes == [1, 2])
        #expect(DBusValue.uint16VariantDictionary([76: .bytes([9])]).uint16KeyedDictionary?[76]?.bytes == [9])
        #expect(Self.managedObjectsShape.signature == "a{oa{sa{sv}}}")
    }
}
