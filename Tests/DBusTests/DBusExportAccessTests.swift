import DBus
import TestWorld
import Testing

/// Exported objects restricted to the owner of a well-known name, against a real dbus-daemon: the owner is looked
/// up when the restriction starts and followed through NameOwnerChanged.
@Suite("Exported objects answer only the owner of a name", .timeLimit(.minutes(1)))
struct DBusExportAccessTests {
    static let trustedName = "org.gattway.TrustedPeer"

    private static func exportEcho(on server: DBusConnection) async throws {
        try await server.export(
            path: "/org/gattway/Test", interfaces: [DBusInterface(name: "org.gattway.Test", methods: [echoMethod])])
    }

    private static func echo(from caller: DBusConnection, to server: DBusConnection) async throws -> [DBusValue] {
        try await caller.call(
            destination: server.uniqueName, path: "/org/gattway/Test", interface: "org.gattway.Test", method: "Echo",
            arguments: [.string("hi")], timeout: .seconds(10))
    }

    private static func expectRefused(
        from caller: DBusConnection, to server: DBusConnection, sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        let error = await #expect(throws: DBusError.self, sourceLocation: sourceLocation) {
            _ = try await echo(from: caller, to: server)
        }
        #expect(error?.name == DBusError.accessDenied, sourceLocation: sourceLocation)
    }

    @Test func anyoneMayCallWithoutARestriction() async throws {
        try await DBusTestBus.with { world in
            try await Self.exportEcho(on: world.server)
            #expect(try await Self.echo(from: world.client, to: world.server) == [.string("hi")])
        }
    }

    @Test func onlyTheCurrentOwnerMayCallAndEveryoneElseIsDenied() async throws {
        try await DBusTestBus.with { world in
            let trusted = try await DBusConnection.connect(
                to: .address(world.bus.address), name: "trusted", logger: DBusTestBus.logger)
            defer { Task { await trusted.close() } }
            #expect(try await trusted.requestName(Self.trustedName) == .primaryOwner)
            try await Self.exportEcho(on: world.server)
            try await world.server.restrictExportedObjects(toOwnerOf: Self.trustedName)

            #expect(try await Self.echo(from: trusted, to: world.server) == [.string("hi")])
            await Self.expectRefused(from: world.client, to: world.server)
            // Introspection and properties are refused too: a stranger learns nothing of the objects.
            let introspect = await #expect(throws: DBusError.self) {
                _ = try await world.client.call(
                    destination: world.server.uniqueName, path: "/org/gattway/Test",
                    interface: "org.freedesktop.DBus.Introspectable", method: "Introspect", arguments: [],
                    timeout: .seconds(10))
            }
            #expect(introspect?.name == DBusError.accessDenied)
            #expect(world.server.refusedCallCount == 2)
        }
    }

    @Test func theRestrictionFollowsTheNameToItsNextOwner() async throws {
        try await DBusTestBus.with { world in
            let trusted = try await DBusConnection.connect(
                to: .address(world.bus.address), name: "trusted", logger: DBusTestBus.logger)
            #expect(try await trusted.requestName(Self.trustedName) == .primaryOwner)
            try await Self.exportEcho(on: world.server)
            try await world.server.restrictExportedObjects(toOwnerOf: Self.trustedName)
            #expect(try await Self.echo(from: trusted, to: world.server) == [.string("hi")])

            // The owner leaves: nobody may call while the name has no owner.
            await trusted.close()
            await Self.expectRefused(from: world.client, to: world.server)
            // A new connection takes the name (bluetoothd restarting): the bus sends NameOwnerChanged to the
            // server before the new owner's call, so the very first call is answered.
            #expect(try await world.client.requestName(Self.trustedName) == .primaryOwner)
            #expect(try await Self.echo(from: world.client, to: world.server) == [.string("hi")])
        }
    }

    @Test func nobodyMayCallWhileTheNameHasNoOwner() async throws {
        try await DBusTestBus.with { world in
            try await Self.exportEcho(on: world.server)
            try await world.server.restrictExportedObjects(toOwnerOf: Self.trustedName)
            await Self.expectRefused(from: world.client, to: world.server)
        }
    }
}
