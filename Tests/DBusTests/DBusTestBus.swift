import DBus
import Logging
import TestWorld
import Testing

/// A private bus with two connections: `server` exports, `client` calls.
struct DBusTestBus {
    let bus: PrivateBus
    let server: DBusConnection
    let client: DBusConnection

    static let logger: Logger = {
        var logger = Logger(label: "gattway.dbus.tests")
        logger.logLevel = .info
        return logger
    }()

    /// Runs `body` against a fresh private bus; the connections and the daemon are closed afterwards.
    ///
    /// `reader`: who reads both connections' sockets (Gattway, the default, or libdbus).
    static func with(reader: DBusReader = .gattway, _ body: (DBusTestBus) async throws -> Void) async throws {
        try await withPrivateBus { bus in
            let server = try await DBusConnection.connect(
                to: .address(bus.address), name: "server", reader: reader, logger: logger)
            let client = try await DBusConnection.connect(
                to: .address(bus.address), name: "client", reader: reader, logger: logger)
            #expect(await client.readsTheBusItself == (reader == .gattway))
            do {
                try await body(DBusTestBus(bus: bus, server: server, client: client))
            } catch {
                await server.close()
                await client.close()
                throw error
            }
            await server.close()
            await client.close()
        }
    }

    /// Calls `method` on the test object the server exports at `path`.
    func call(
        _ method: String, _ arguments: [DBusValue] = [], path: String = "/org/gattway/Test",
        interface: String = "org.gattway.Test", timeout: Duration = .seconds(10)
    ) async throws -> [DBusValue] {
        try await client.call(
            destination: server.uniqueName, path: path, interface: interface, method: method, arguments: arguments,
            timeout: timeout)
    }
}

/// An `Echo` method that returns its arguments unchanged.
let echoMethod = DBusMethod(name: "Echo", handler: .sync { call in call.arguments })
