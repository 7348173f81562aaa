import BlueZ
import BluetoothCore
import DBus
import Foundation
import Logging
import TestWorld
import Testing

/// The BlueZ client layer against the BlueZ simulator on its private bus.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct BlueZClientTests {
    static let strap = "/org/bluez/hci0/dev_C4_7C_8D_6A_3E_11"

    /// Runs `body` with a client on a simulator running `scenario`, feeding a tree from `watch()`.
    private func withClient(
        scenario: String = "heart-rate.yaml",
        _ body: (BlueZClient, TreeFollower, BlueZSimulatorProcess) async throws -> Void
    ) async throws {
        let simulator = try await BlueZSimulatorProcess(scenario: scenario)
        let connection = try await DBusConnection.connect(
            to: .address(simulator.busAddress), name: "bluez-test", logger: Logger(label: "test.bluez"))
        let client = BlueZClient(connection: connection, logger: Logger(label: "test.bluez"))
        let follower = TreeFollower()
        let watcher = Task { for await event in client.watch() { await follower.apply(event) } }
        do {
            try await body(client, follower, simulator)
        } catch {
            watcher.cancel()
            await connection.close()
            await simulator.stop()
            throw error
        }
        watcher.cancel()
        await connection.close()
        await simulator.stop()
    }

    @Test func snapshotShowsTheAdaptersAndDiscoveryFindsThePeripheral() async throws {
        try await withClient { client, follower, _ in
            try await follower.waitUntil { $0.adapters["/org/bluez/hci0"]?.powered == true }
            try await client.setDiscoveryFilter(adapter: "/org/bluez/hci0", BlueZDiscoveryFilter(duplicateData: true))
            try await client.startDiscovery(adapter: "/org/bluez/hci0")
            try await follower.waitUntil { $0.devices[Self.strap]?.rssi != nil }
            let device = try #require(await follower.tree.devices[Self.strap])
            #expect(device.address == BluetoothAddress("C4:7C:8D:6A:3E:11"))
            #expect(device.name?.hasPrefix("Polar") == true)
            // BlueZ allows one discovery session per client.
            let second = await #expect(throws: DBusError.self) {
                try await client.startDiscovery(adapter: "/org/bluez/hci0")
            }
            #expect(second?.name == BlueZName.Error.inProgress)
        }
    }

    @Test func connectResolvesServicesThenReadsWritesAndNotifiesThroughASocket() async throws {
        try await withClient { client, follower, simulator in
            try await client.startDiscovery(adapter: "/org/bluez/hci0")
            try await follower.waitUntil { $0.devices[Self.strap] != nil }
            try await client.connect(device: Self.strap, timeout: .seconds(10))
            try await follower.waitUntil { $0.devices[Self.strap]?.servicesResolved == true }
            let tree = await follower.tree
            let heartRate = try #require(
                tree.characteristic(
                    ofDevice: Self.strap, service: BluetoothUUID("180D")!, uuid: BluetoothUUID("2A37")!))
            let control = try #require(
                tree.characteristic(
                    ofDevice: Self.strap, service: BluetoothUUID("180D")!, uuid: BluetoothUUID("2A39")!))
            let location = try #require(
                tree.characteristic(
                    ofDevice: Self.strap, service: BluetoothUUID("180D")!, uuid: BluetoothUUID("2A38")!))
            // Body Sensor Location: chest.
            #expect(try await client.readValue(characteristic: location.path, timeout: .seconds(5)) == [0x01])
            try await client.writeValue(characteristic: control.path, [0x01], type: .request, timeout: .seconds(5))
            #expect(try await Self.writes(in: simulator, uuid: "2A39") == [[0x01]])
            let (fd, mtu) = try await client.acquireNotify(characteristic: heartRate.path)
            #expect(mtu >= 23)
            let (socket, batches) = try NotificationSocket.streaming(fd: fd.take(), mtu: mtu)
            var iterator = batches.makeAsyncIterator()
            let batch = try #require(await iterator.next())
            #expect(batch.first?.isEmpty == false)
            // A second AcquireNotify while acquired is refused, as bluetoothd does.
            await #expect(throws: DBusError.self) { _ = try await client.acquireNotify(characteristic: heartRate.path) }
            socket.close()
            try await client.disconnect(device: Self.strap)
            try await follower.waitUntil { $0.devices[Self.strap]?.connected == false }
            // Not connected: reads fail with BlueZ's error instead of hanging.
            let refused = await #expect(throws: DBusError.self) {
                _ = try await client.readValue(characteristic: location.path, timeout: .seconds(5))
            }
            #expect(refused?.name == BlueZName.Error.failed || refused?.name == BlueZName.Error.notConnected)
        }
    }

    @Test func bluetoothdRestartIsSeenAsLossThenAFreshSnapshot() async throws {
        try await withClient { client, follower, simulator in
            try await follower.waitUntil { !$0.adapters.isEmpty }
            #expect(await follower.counts().snapshots == 1)
            let control = try await DBusConnection.connect(
                to: .address(simulator.busAddress), name: "control", logger: Logger(label: "test.control"))
            _ = try await control.call(
                destination: "org.gattway.Simulator1", path: "/org/gattway/simulator",
                interface: "org.gattway.Simulator1", method: "RestartBluetoothd", arguments: [.double(0.5)])
            // The old bluetoothd's name vanishes (a loss), then the new one's tree arrives (a second snapshot).
            try await follower.waitForCounts { $0.losses >= 1 && $0.snapshots >= 2 }
            try await follower.waitUntil { $0.adapters["/org/bluez/hci0"] != nil }
            await control.close()
            _ = client
        }
    }
}

extension BlueZClientTests {
    /// The values written to the strap's characteristic `uuid`, from the simulator's own record (GetWrites).
    static func writes(in simulator: BlueZSimulatorProcess, uuid: String) async throws -> [[UInt8]] {
        let control = try await DBusConnection.connect(
            to: .address(simulator.busAddress), name: "control", logger: Logger(label: "test.control"))
        let reply = try await control.call(
            destination: "org.gattway.Simulator1", path: "/org/gattway/simulator", interface: "org.gattway.Simulator1",
            method: "GetWrites", arguments: [.string("C4:7C:8D:6A:3E:11"), .string(uuid)])
        await control.close()
        // a(ayqs): value, offset, kind.
        return (reply.first?.arrayElements ?? []).compactMap { $0.structureFields?.first?.bytes }
    }
}

/// Keeps a BlueZObjectTree up to date from the client's events, and lets a test wait for a condition.
actor TreeFollower {
    private(set) var tree = BlueZObjectTree(maxDevices: 1000)
    private(set) var snapshots = 0
    private(set) var losses = 0

    func apply(_ event: BlueZClient.Event) {
        switch event {
        case .snapshot(let objects):
            snapshots += 1
            _ = tree.replaceAll(with: objects)
        case .serviceLost:
            losses += 1
            _ = tree.replaceAll(with: .dictionary(keySignature: "o", valueSignature: "a{sa{sv}}", []))
        case .interfacesAdded(let path, let interfaces):
            _ = tree.interfacesAdded(path: path, interfaces: interfaces)
        case .interfacesRemoved(let path, let interfaces):
            _ = tree.interfacesRemoved(path: path, interfaces: interfaces)
        case .propertiesChanged(let path, let interface, let changed, let invalidated):
            _ = tree.propertiesChanged(path: path, interface: interface, changed: changed, invalidated: invalidated)
        }
    }

    func waitUntil(timeout: Duration = .seconds(30), _ condition: @Sendable (BlueZObjectTree) -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition(tree) { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TestWorldError("the BlueZ tree did not reach the expected state within \(timeout)")
    }

    func counts() -> (snapshots: Int, losses: Int) { (snapshots, losses) }

    func waitForCounts(
        timeout: Duration = .seconds(30), _ condition: @Sendable ((snapshots: Int, losses: Int)) -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition(counts()) { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TestWorldError("the client saw \(snapshots) snapshots and \(losses) losses within \(timeout)")
    }
}

@Suite(.timeLimit(.minutes(5))) struct CharacteristicValueTapTests {
    private func signal(_ changed: [(String, DBusValue)], invalidated: [String] = []) -> DBusSignal {
        DBusSignal(
            sender: ":1.1", path: "/org/bluez/hci0/dev_C4_7C_8D_6A_3E_11/service000c/char000d",
            interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
            arguments: [
                .string("org.bluez.GattCharacteristic1"),
                .dictionary(
                    keySignature: "s", valueSignature: "v",
                    changed.map {
                        DBusDictEntry(key: .string($0.0), value: .variant($0.1))
                    }),
                .array(elementSignature: "s", invalidated.map { .string($0) }),
            ])
    }

    @Test func aLoneValueIsTaken() {
        #expect(BlueZClient.loneValue(of: signal([("Value", .byteArray([0x00, 0x48]))])) == [0x00, 0x48])
        #expect(BlueZClient.loneValue(of: signal([("Value", .byteArray([]))])) == [])
    }

    @Test func aValueWithOtherChangesGoesToTheObjectTree() {
        #expect(BlueZClient.loneValue(of: signal([("Value", .byteArray([1])), ("Notifying", .bool(true))])) == nil)
        #expect(BlueZClient.loneValue(of: signal([("Value", .byteArray([1]))], invalidated: ["Flags"])) == nil)
        #expect(BlueZClient.loneValue(of: signal([("Notifying", .bool(false))])) == nil)
        #expect(BlueZClient.loneValue(of: signal([("Value", .string("not bytes"))])) == nil)
    }
}
