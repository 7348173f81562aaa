import BlueZ
import BluetoothCore
import DBus
import Logging
import Synchronization
import TestWorld
import Testing

/// The passive advertisement hot path reads a device's PropertiesChanged in place: it must take exactly the
/// advert reports, with the values the general decoding would give, and decline every other shape (those go to
/// the object tree) and every value larger than an advertisement can be.
@Suite("Advertisement reports read in place")
struct BlueZAdvertReadingTests {
    private static let device = "org.bluez.Device1"
    private static let bthome = "0000fcd2-0000-1000-8000-00805f9b34fb"

    private static func changed(
        _ interface: String, _ entries: [(String, DBusValue)],
        invalidated: [String] = []
    ) -> [DBusValue] {
        [
            .string(interface),
            .dictionary(
                keySignature: "s", valueSignature: "v",
                entries.map { DBusDictEntry(key: .string($0.0), value: .variant($0.1)) }),
            .stringArray(invalidated),
        ]
    }

    private static func serviceData(_ entries: [(String, DBusValue)]) -> DBusValue {
        .dictionary(
            keySignature: "s", valueSignature: "v",
            entries.map { DBusDictEntry(key: .string($0.0), value: .variant($0.1)) })
    }

    /// Each shape, with the properties the in-place reader must take from it (nil: declined).
    private static let cases: [(arguments: [DBusValue], expected: [BLEDeviceProperty]?)] = [
        (changed(device, [("RSSI", .int16(-61))]), [.rssi(-61)]),
        (
            changed(
                device,
                [("ServiceData", serviceData([(bthome, .bytes([0x40, 0x02, 0xCA, 0x09]))])), ("RSSI", .int16(-70))]),
            [.serviceData([bthome: [0x40, 0x02, 0xCA, 0x09]]), .rssi(-70)]
        ),
        (
            changed(device, [("ManufacturerData", .uint16VariantDictionary([0x004C: .bytes([2, 21, 7])]))]),
            [.manufacturerData([0x004C: [2, 21, 7]])]
        ),
        (changed(device, [("TxPower", .int16(4))]), [.txPower(4)]),
        (
            changed(
                device,
                [("ManufacturerData", .uint16VariantDictionary([0x0499: .bytes(Array(repeating: 1, count: 1_650))]))]),
            [.manufacturerData([0x0499: Array(repeating: 1, count: 1_650)])]
        ),
        (changed(device, [("ServiceData", serviceData([(bthome, .bytes([]))]))]), [.serviceData([bthome: []])]),
        // Declined: other properties, other types, too large, invalidations, another interface or shape.
        (changed(device, [("Name", .string("sensor"))]), nil),
        // Names compared whole: a known name's prefix or extension is another property.
        (changed(device, [("RSSIX", .int16(-60))]), nil),
        (changed(device, [("RSS", .int16(-60))]), nil),
        (changed(device, [("TxPowe", .int16(4))]), nil),
        (changed(device, [("RSSI", .int16(-60)), ("Connected", .bool(true))]), nil),
        (changed(device, [("RSSI", .int32(-60))]), nil),
        (changed(device, [("ManufacturerData", .uint16VariantDictionary([0x004C: .string("text")]))]), nil),
        (changed(device, [("ManufacturerData", .bytes([1, 2]))]), nil),
        (
            changed(
                device,
                [("ManufacturerData", .uint16VariantDictionary([0x0499: .bytes(Array(repeating: 1, count: 1_651))]))]),
            nil
        ),
        (
            changed(
                device,
                [
                    (
                        "ServiceData",
                        serviceData(
                            (0..<33).map {
                                ("0000\(String(0x1000 + $0, radix: 16))-0000-1000-8000-00805f9b34fb", .bytes([1]))
                            })
                    )
                ]),
            nil
        ),
        (changed(device, [("ServiceData", serviceData([(String(repeating: "a", count: 65), .bytes([1]))]))]), nil),
        (changed(device, [("RSSI", .int16(-60))], invalidated: ["TxPower"]), nil),
        (changed("org.bluez.GattCharacteristic1", [("RSSI", .int16(-60))]), nil),
        (changed(device, []), nil),
        (changed(device, [("RSSI", .int16(-60))]) + [.string("extra")], nil),
        (Array(changed(device, [("RSSI", .int16(-60))]).prefix(2)), nil),
        ([], nil),
    ]

    /// Emits each signal as PropertiesChanged from its path on a private bus, and returns what `read` made of each,
    /// as a tap on the receiving connection saw them (in order).
    private static func tapped(
        _ signals: [(path: String, arguments: [DBusValue])],
        read: @escaping @Sendable (DBusSignalMessage) -> (String, [BLEDeviceProperty]?)
    ) async throws -> [(String, [BLEDeviceProperty]?)] {
        try await withPrivateBus { bus in
            let logger = Logger(label: "gattway.bluez.tests")
            let server = try await DBusConnection.connect(to: .address(bus.address), name: "server", logger: logger)
            let client = try await DBusConnection.connect(to: .address(bus.address), name: "client", logger: logger)
            let (readings, continuation) = AsyncStream.makeStream(of: (String, [BLEDeviceProperty]?).self)
            _ = try await client.tapMessages(
                matching: DBusMatchRule(
                    sender: server.uniqueName, interface: "org.freedesktop.DBus.Properties",
                    member: "PropertiesChanged")
            ) { message in
                continuation.yield(read(message))
                return true
            }
            for signal in signals {
                try await server.emitSignal(
                    path: signal.path, interface: "org.freedesktop.DBus.Properties", name: "PropertiesChanged",
                    arguments: signal.arguments)
            }
            let received = try await withDeadline(.seconds(20), "\(signals.count) tapped signals") {
                var received: [(String, [BLEDeviceProperty]?)] = []
                for await reading in readings {
                    received.append(reading)
                    if received.count == signals.count { break }
                }
                return received
            }
            await server.close()
            await client.close()
            return received
        }
    }

    @Test("advert reports are taken with the general decoding's values, every other shape is declined")
    func advertReportsInPlace() async throws {
        let received = try await Self.tapped(
            Self.cases.enumerated().map { ("/org/bluez/hci0/dev_C4_7C_8D_6A_3E_\($0.offset)", $0.element.arguments) }
        ) { message in
            (message.path, BlueZClient.advertProperties(of: message))
        }
        #expect(received.count == Self.cases.count)
        for (index, (path, properties)) in received.enumerated() {
            #expect(path == "/org/bluez/hci0/dev_C4_7C_8D_6A_3E_\(index)")
            #expect(properties == Self.cases[index].expected, "case \(index)")
            // What is taken must equal what the object tree's general decoding makes of the same signal.
            if let properties {
                var inPlace = BLEDeviceState(path: path)
                _ = inPlace.apply(properties)
                var general = BLEDeviceState(path: path)
                let arguments = Self.cases[index].arguments
                general.apply(changed: arguments[1].stringKeyedDictionary ?? [:], invalidated: [])
                #expect(inPlace == general, "case \(index)")
            }
        }
    }

    /// Reports of one device in a row, each read after the one before (as the tap reads them, reusing the storage of
    /// what repeats): each must still give exactly what it carries, whatever the report before it held.
    private static let sequence: [(path: String, arguments: [DBusValue], expected: [BLEDeviceProperty]?)] = {
        let first = "/org/bluez/hci0/dev_A4_C1_38_B0_00_01"
        let second = "/org/bluez/hci0/dev_A4_C1_38_B0_00_02"
        let other = "0000181a-0000-1000-8000-00805f9b34fb"
        func service(_ entries: [(String, [UInt8])], rssi: Int16 = -60) -> [DBusValue] {
            changed(
                device, [("ServiceData", serviceData(entries.map { ($0.0, .bytes($0.1)) })), ("RSSI", .int16(rssi))])
        }
        func rssi(_ values: Int16...) -> [DBusValue] { changed(device, values.map { ("RSSI", .int16($0)) }) }
        let large: [(String, [UInt8])] = [
            (bthome, Array(repeating: 7, count: 1_200)), (other, Array(repeating: 8, count: 1_000)),
        ]
        func manufacturer(_ entries: [(UInt16, [UInt8])]) -> [DBusValue] {
            changed(
                device,
                [
                    (
                        "ManufacturerData",
                        .dictionary(
                            keySignature: "q", valueSignature: "v",
                            entries.map { DBusDictEntry(key: .uint16($0.0), value: .variant(.bytes($0.1))) })
                    )
                ])
        }
        return [
            (first, service([(bthome, [1, 2, 3])]), [.serviceData([bthome: [1, 2, 3]]), .rssi(-60)]),
            (first, service([(bthome, [1, 2, 3])]), [.serviceData([bthome: [1, 2, 3]]), .rssi(-60)]),
            (first, service([(bthome, [1, 2, 4])]), [.serviceData([bthome: [1, 2, 4]]), .rssi(-60)]),
            (first, service([(bthome, [1, 2])]), [.serviceData([bthome: [1, 2]]), .rssi(-60)]),
            (
                first, service([(bthome, [1, 2]), (other, [9])]),
                [.serviceData([bthome: [1, 2], other: [9]]), .rssi(-60)]
            ),
            // The same keys with new bytes, in another order; then one key twice (the last one counts).
            (
                first, service([(other, [8]), (bthome, [1, 3])]),
                [.serviceData([bthome: [1, 3], other: [8]]), .rssi(-60)]
            ),
            (first, service([(other, [8]), (other, [7])]), [.serviceData([other: [7]]), .rssi(-60)]),
            (first, service([(bthome, [1, 2])]), [.serviceData([bthome: [1, 2]]), .rssi(-60)]),
            (first, service([(bthome, [1, 2]), (bthome, [1, 2])]), [.serviceData([bthome: [1, 2]]), .rssi(-60)]),
            (first, service([(other, [1, 2])]), [.serviceData([other: [1, 2]]), .rssi(-60)]),
            (first, service([]), [.serviceData([:]), .rssi(-60)]),
            (first, service([(bthome, [])]), [.serviceData([bthome: []]), .rssi(-60)]),
            (first, service([(bthome, [])]), [.serviceData([bthome: []]), .rssi(-60)]),
            (first, changed(device, [("RSSI", .int16(-60)), ("Connected", .bool(true))]), nil),
            (first, service([(String(repeating: "a", count: 65), [1])]), nil),
            (first, manufacturer([(0x004C, [2, 21])]), [.manufacturerData([0x004C: [2, 21]])]),
            (first, manufacturer([(0x004C, [2, 21])]), [.manufacturerData([0x004C: [2, 21]])]),
            (
                first, manufacturer([(0x004C, [2, 21]), (0x0499, [1])]),
                [.manufacturerData([0x004C: [2, 21], 0x0499: [1]])]
            ),
            (
                first, manufacturer([(0x0499, [2]), (0x004C, [2, 22])]),
                [.manufacturerData([0x004C: [2, 22], 0x0499: [2]])]
            ),
            (first, manufacturer([(0x0499, [3]), (0x0499, [4])]), [.manufacturerData([0x0499: [4]])]),
            (first, manufacturer([(0x0499, [1])]), [.manufacturerData([0x0499: [1]])]),
            (first, manufacturer([(0x0499, Array(repeating: 1, count: 1_651))]), nil),
            (first, manufacturer([(0x0499, [1])]), [.manufacturerData([0x0499: [1]])]),
            (second, manufacturer([(0x0499, [1])]), [.manufacturerData([0x0499: [1]])]),
            (second, service([(bthome, [1, 2, 3])]), [.serviceData([bthome: [1, 2, 3]]), .rssi(-60)]),
            (first, service([(bthome, [1, 2, 3])]), [.serviceData([bthome: [1, 2, 3]]), .rssi(-60)]),
            // Repeats that differ in the RSSI alone (not read again), then in the data, in both.
            (first, service([(bthome, [1, 2, 3])], rssi: -61), [.serviceData([bthome: [1, 2, 3]]), .rssi(-61)]),
            (first, service([(bthome, [1, 2, 3])], rssi: 300), [.serviceData([bthome: [1, 2, 3]]), .rssi(300)]),
            (first, service([(bthome, [1, 2, 3])], rssi: 300), [.serviceData([bthome: [1, 2, 3]]), .rssi(300)]),
            (first, service([(bthome, [1, 2, 4])], rssi: 300), [.serviceData([bthome: [1, 2, 4]]), .rssi(300)]),
            (first, service([(bthome, [1, 2, 5])], rssi: -70), [.serviceData([bthome: [1, 2, 5]]), .rssi(-70)]),
            (first, service([(bthome, [1, 2, 5])], rssi: -71), [.serviceData([bthome: [1, 2, 5]]), .rssi(-71)]),
            (second, service([(bthome, [1, 2, 5])], rssi: -72), [.serviceData([bthome: [1, 2, 5]]), .rssi(-72)]),
            (second, rssi(-50), [.rssi(-50)]),
            (second, rssi(-51), [.rssi(-51)]),
            // Two RSSI entries: the first one's bytes alone may differ in a repeat.
            (second, rssi(-50, -52), [.rssi(-50), .rssi(-52)]),
            (second, rssi(-53, -52), [.rssi(-53), .rssi(-52)]),
            (second, rssi(-53, -54), [.rssi(-53), .rssi(-54)]),
            (second, rssi(-55, -56), [.rssi(-55), .rssi(-56)]),
            (second, changed(device, [("RSSI", .int16(-55)), ("Connected", .bool(true))]), nil),
            (second, rssi(-55, -56), [.rssi(-55), .rssi(-56)]),
            // A body over 2 KiB is not remembered: its repeats are read whole, and still read right.
            (second, service(large, rssi: -40), [.serviceData(AdvertisedEntries(large)), .rssi(-40)]),
            (second, service(large, rssi: -41), [.serviceData(AdvertisedEntries(large)), .rssi(-41)]),
            (second, service(large, rssi: -41), [.serviceData(AdvertisedEntries(large)), .rssi(-41)]),
            (second, service([(bthome, [1])], rssi: -41), [.serviceData([bthome: [1]]), .rssi(-41)]),
        ]
    }()

    @Test("a report read after another gives what it carries, whatever the one before held")
    func reportsReadInARow() async throws {
        let last = LastAdvertReport()
        let remembered = Mutex<[Int]>([])
        let received = try await Self.tapped(Self.sequence.map { ($0.path, $0.arguments) }) { message in
            let report = BlueZClient.advertReport(message, after: last)
            remembered.withLock { $0.append(last.rememberedBodyBytes) }
            return (report?.path ?? message.path, report?.properties)
        }
        #expect(received.count == Self.sequence.count)
        let sizes = remembered.withLock { $0 }
        #expect(sizes.allSatisfy { $0 <= LastAdvertReport.maxRememberedBody }, "\(sizes)")
        #expect(sizes.suffix(4).prefix(3).allSatisfy { $0 == 0 }, "the large bodies are not remembered: \(sizes)")
        #expect(sizes.last ?? 0 > 0, "a small body read whole is remembered")
        for (index, (path, properties)) in received.enumerated() {
            #expect(path == Self.sequence[index].path, "report \(index)")
            #expect(properties == Self.sequence[index].expected, "report \(index)")
        }
    }

    @Test("service UUID keys read among many devices are kept for reuse, at most eight, the latest added first")
    func serviceUUIDKeysAreKept() async throws {
        // Twelve devices, each advertising its own UUID, then the first four again: the reports must read as they
        // would alone, and only the eight newest keys stay. A third of the keys share their first 8 bytes and a
        // third are shorter than that, so that keys found by their first bytes are still compared whole.
        let uuids = (0..<12).map { index in
            switch index % 3 {
            case 0: "0000fc00-0000-1000-8000-00805f9b34" + String(0x10 + index, radix: 16)
            case 1: "0000\(String(0xFC00 + index, radix: 16))-0000-1000-8000-00805f9b34fb"
            default: "fc\(index)"
            }
        }
        let order = Array(0..<12) + Array(0..<4)
        let reports = order.map { index in
            (
                path: "/org/bluez/hci0/dev_A4_C1_38_B0_01_0" + String(index, radix: 16, uppercase: true),
                arguments: Self.changed(
                    Self.device,
                    [
                        ("ServiceData", Self.serviceData([(uuids[index], .bytes([UInt8(index)]))])),
                        ("RSSI", .int16(-60)),
                    ]),
                expected: [BLEDeviceProperty.serviceData([uuids[index]: [UInt8(index)]]), .rssi(-60)]
            )
        }
        let last = LastAdvertReport()
        let received = try await Self.tapped(reports.map { ($0.path, $0.arguments) }) { message in
            let report = BlueZClient.advertReport(message, after: last)
            return (report?.path ?? message.path, report?.properties)
        }
        #expect(received.map(\.1) == reports.map(\.expected))
        #expect(last.serviceUUIDs.count == LastAdvertReport.maxServiceUUIDs)
        #expect(last.serviceUUIDs == [3, 2, 1, 0, 11, 10, 9, 8].map { uuids[$0] })
    }
}
