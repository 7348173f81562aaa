import DBus
import Foundation
import TestWorld
import Testing

@Suite("Choosing a bus", .timeLimit(.minutes(5)))
struct DBusBusAddressTests {
    /// The test process shares its environment with every test running beside it, so gattway gets the variable in
    /// its own environment instead, and the test watches which bus it joins.
    @Test("the system bus honours DBUS_SYSTEM_BUS_ADDRESS: gattway given it joins that bus")
    func systemBusFollowsTheEnvironment() async throws {
        try await withPrivateBus { bus in
            let directory = try makeTemporaryDirectory("gattway-bus-address")
            let config = directory + "/config.yaml"
            // No broker listens on port 1: gattway keeps retrying MQTT while it is already on the bus.
            try "mqtt: { url: \"mqtt://127.0.0.1:1\" }\nstate_dir: \"\(directory)/state\"\n".write(
                toFile: config, atomically: true, encoding: .utf8)
            let gattway = try GattwayBinary.start(config: config, environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
            let watcher = try await DBusConnection.connect(
                to: .address(bus.address), name: "watcher", logger: DBusTestBus.logger)
            let joined = try await Self.waitForConnection(ofProcess: gattway.pid, on: watcher)
            #expect(
                joined, "gattway did not join the bus in DBUS_SYSTEM_BUS_ADDRESS: \(gattway.errorOutput.suffix(2000))")
            await watcher.close()
            await gattway.stop()
        }
    }

    /// Whether a connection of process `pid` appears on the bus within 20 s.
    private static func waitForConnection(ofProcess pid: Int32, on connection: DBusConnection) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            let names =
                try await connection.call(
                    destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                    interface: "org.freedesktop.DBus",
                    method: "ListNames"
                ).first?.stringArray ?? []
            for name in names where name.hasPrefix(":") && name != connection.uniqueName {
                let owner = try? await connection.call(
                    destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                    interface: "org.freedesktop.DBus",
                    method: "GetConnectionUnixProcessID", arguments: [.string(name)])
                if owner?.first?.uint32 == UInt32(bitPattern: pid) { return true }
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    @Test("an address where no bus listens fails with a message naming the address")
    func missingBusFailsClearly() async throws {
        let error = await #expect(throws: DBusError.self) {
            _ = try await DBusConnection.connect(
                to: .address("unix:path=/nonexistent/gattway-no-bus"), logger: DBusTestBus.logger)
        }
        #expect(error?.message.contains("/nonexistent/gattway-no-bus") == true)
    }
}
