import BluetoothCore
import BridgeCore
import BridgeTesting
import Foundation
import Logging
import MQTTCore
import Testing

@testable import CentralBridge

/// The value relay's routing, as the D-Bus tap drives it: a value goes to the route registered for its
/// characteristic now, never to one that was replaced or removed (the relay remembers the route it found last).
@Suite("Value relay", .timeLimit(.minutes(5)))
struct ValueRelayTests {
    static let device = "/org/bluez/hci0/dev_A4_C1_38_00_00_01"
    static let first = device + "/service0010/char0011"
    static let second = device + "/service0010/char0014"

    static func route(_ topic: String) -> CharacteristicRoute {
        CharacteristicRoute(
            deviceIndex: 0,
            characteristic: CharacteristicConfiguration(
                service: BluetoothUUID(uuid16: 0x181A), uuid: BluetoothUUID(uuid16: 0x2A6E), notify: true, codec: .hex),
            valueTopic: topic, qos: .atMostOnce, retain: false)
    }

    @Test("values follow the routes registered now: replaced, added and removed routes")
    func valuesFollowTheCurrentRoutes() async throws {
        let broker = InMemoryMQTTBroker()
        let logger = Logger(label: "gattway.tests.relay")
        let clock = BridgeClock(ManualClock())
        let outbox = Outbox(mqtt: broker.makeClient(id: "bridge"), logger: logger, clock: clock)
        let directory = NSTemporaryDirectory() + "gattway-relay-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let relay = ValueRelay(
            outbox: outbox, store: CentralStateStore(directory: directory, logger: logger), metrics: CentralMetrics(),
            logger: logger)

        #expect(!relay.relay([0x01], ofCharacteristic: Self.first))
        relay.setRoutes([Self.first: Self.route("gw/a")], ofDevice: Self.device)
        #expect(relay.relay([0x02], ofCharacteristic: Self.first))
        #expect(relay.relay([0x03], ofCharacteristic: Self.first))
        // The same characteristic routed elsewhere, beside a second one.
        relay.setRoutes(
            [Self.first: Self.route("gw/b"), Self.second: Self.route("gw/c")], ofDevice: Self.device)
        #expect(relay.relay([0x04], ofCharacteristic: Self.first))
        #expect(relay.relay([0x05], ofCharacteristic: Self.second))
        #expect(relay.relay([0x06], ofCharacteristic: Self.first))
        // Routes removed: nothing is relayed, even for the characteristic found last.
        relay.setRoutes([:], ofDevice: Self.device)
        #expect(!relay.relay([0x07], ofCharacteristic: Self.first))

        let mark = broker.publicationCount
        outbox.send(MQTTMessage(topic: "marker", text: "\(mark)", qos: .atMostOnce))
        _ = try await broker.nextPublished(on: "marker", since: mark)
        func published(_ topic: String) -> [String] {
            broker.published(on: topic).map { String(decoding: $0.payload, as: UTF8.self) }
        }
        #expect(published("gw/a") == ["02", "03"])
        #expect(published("gw/b") == ["04", "06"])
        #expect(published("gw/c") == ["05"])
    }
}
