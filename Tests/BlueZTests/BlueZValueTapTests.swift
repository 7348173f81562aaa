import BlueZ
import DBus
import Logging
import TestWorld
import Testing

/// The StartNotify hot path: `tapCharacteristicValues` hands on each lone Value change with the path it came from,
/// keeping the last path's String while values repeat it, so a change of characteristic must never be reported
/// under the path before it.
@Suite("Characteristic values tapped in place", .timeLimit(.minutes(5)))
struct BlueZValueTapTests {
    private static let characteristic = "/org/bluez/hci0/dev_C4_7C_8D_6A_3E_11/service000c/char"

    private static func valueChange(_ value: [UInt8]) -> [DBusValue] {
        [
            .string("org.bluez.GattCharacteristic1"),
            .dictionary(
                keySignature: "s", valueSignature: "v",
                [DBusDictEntry(key: .string("Value"), value: .variant(.byteArray(value)))]),
            .array(elementSignature: "s", []),
        ]
    }

    @Test("values from interleaved characteristics each arrive with their own path, around a declined signal")
    func interleavedPaths() async throws {
        // Runs from one characteristic, changes between them, and a path that returns after another.
        let order = ["000d", "000d", "0010", "000d", "0010", "0010", "0013", "000d"]
        try await withPrivateBus { bus in
            let logger = Logger(label: "gattway.bluez.tests")
            let server = try await DBusConnection.connect(to: .address(bus.address), name: "bluez", logger: logger)
            _ = try await server.requestName("org.bluez")
            let client = try await DBusConnection.connect(to: .address(bus.address), name: "client", logger: logger)
            let bluez = BlueZClient(connection: client, logger: logger)
            let (values, continuation) = AsyncStream.makeStream(of: (String, [UInt8]).self)
            _ = try await bluez.tapCharacteristicValues { path, value in
                continuation.yield((path, value))
                return true
            }
            for (index, suffix) in order.enumerated() {
                if index == 3 {
                    // Not a lone Value change: declined by the tap, so it must not disturb the paths that follow.
                    try await server.emitSignal(
                        path: Self.characteristic + "0016", interface: "org.freedesktop.DBus.Properties",
                        name: "PropertiesChanged",
                        arguments: [
                            .string("org.bluez.GattCharacteristic1"),
                            .dictionary(
                                keySignature: "s", valueSignature: "v",
                                [DBusDictEntry(key: .string("Notifying"), value: .variant(.bool(true)))]),
                            .array(elementSignature: "s", []),
                        ])
                }
                try await server.emitSignal(
                    path: Self.characteristic + suffix, interface: "org.freedesktop.DBus.Properties",
                    name: "PropertiesChanged", arguments: Self.valueChange([UInt8(index)]))
            }
            let received = try await withDeadline(.seconds(20), "\(order.count) tapped values") {
                var received: [(String, [UInt8])] = []
                for await value in values {
                    received.append(value)
                    if received.count == order.count { break }
                }
                return received
            }
            #expect(received.map(\.0) == order.map { Self.characteristic + $0 })
            #expect(received.map(\.1) == order.indices.map { [UInt8($0)] })
            await server.close()
            await client.close()
        }
    }
}
