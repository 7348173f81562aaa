import DBus
import Foundation
import Testing
import TestWorld

@Suite("Choosing a bus")
struct DBusBusAddressTests {
    @Test("the system and session buses honour DBUS_SYSTEM_BUS_ADDRESS and DBUS_SESSION_BUS_ADDRESS")
    func wellKnownBusesFollowTheEnvironment() async throws {
        try await withPrivateBus { bus in
            // Only this test in the process connects to .system or .session, so setting the variables is safe.
            setenv("DBUS_SYSTEM_BUS_ADDRESS", bus.address, 1)
            setenv("DBUS_SESSION_BUS_ADDRESS", bus.address, 1)
            let system = try await DBusConnection.connect(to: .system, name: "system", logger: DBusTestBus.logger)
            let session = try await DBusConnection.connect(to: .session, name: "session", logger: DBusTestBus.logger)
            let names = try await system.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                method: "ListNames")
            #expect(names.first?.stringArray?.contains(session.uniqueName) == true)
            await system.close()
            await session.close()
        }
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
