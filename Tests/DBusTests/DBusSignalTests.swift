import DBus
import TestWorld
import Testing

@Suite("D-Bus signals and match rules", .timeLimit(.minutes(5)))
struct DBusSignalTests {
    /// Collects `count` signals from `stream` (fewer when the stream ends), failing after 20 s.
    static func collect(_ count: Int, from stream: DBusSignalStream) async throws -> [DBusSignal] {
        try await withDeadline(.seconds(20), "\(count) signals") {
            var received: [DBusSignal] = []
            for await signal in stream {
                received.append(signal)
                if received.count == count { break }
            }
            return received
        }
    }

    @Test(
        "path_namespace and arg0 rules deliver only what they match, to every matching stream",
        arguments: DBusReader.allCases)
    func rulesFilterAndFanOut(reader: DBusReader) async throws {
        try await DBusTestBus.with(reader: reader) { world in
            let sender = world.server.uniqueName
            let namespace = try await world.client.signals(
                matching: DBusMatchRule(sender: sender, interface: "org.gattway.Test", pathNamespace: "/a"))
            let byArg0 = try await world.client.signals(
                matching: DBusMatchRule(sender: sender, interface: "org.gattway.Test", arg0: "pick"))
            let everything = try await world.client.signals(
                matching: DBusMatchRule(sender: sender, interface: "org.gattway.Test"))
            let emit = { (path: String, arg: String) in
                try await world.server.emitSignal(
                    path: path, interface: "org.gattway.Test", name: "Changed", arguments: [.string(arg)])
            }
            try await emit("/a", "pick")
            try await emit("/ab", "skip")
            try await emit("/a/b", "skip")
            try await emit("/c", "pick")
            try await emit("/a", "end")

            let all = try await Self.collect(5, from: everything)
            #expect(all.map(\.path) == ["/a", "/ab", "/a/b", "/c", "/a"])
            #expect(all.allSatisfy { $0.sender == sender && $0.member == "Changed" })
            let inNamespace = try await Self.collect(3, from: namespace)
            #expect(inNamespace.map(\.path) == ["/a", "/a/b", "/a"])
            let picked = try await Self.collect(2, from: byArg0)
            #expect(picked.map(\.path) == ["/a", "/c"])
            #expect(picked.first?.arguments == [.string("pick")])
        }
    }

    @Test("a well-known sender name matches the signals of its owner", arguments: DBusReader.allCases)
    func wellKnownSenderMatchesOwner(reader: DBusReader) async throws {
        try await DBusTestBus.with(reader: reader) { world in
            #expect(try await world.server.requestName("org.gattway.Emitter") == .primaryOwner)
            let stream = try await world.client.signals(
                matching: DBusMatchRule(sender: "org.gattway.Emitter", interface: "org.gattway.Test"))
            try await world.server.emitSignal(path: "/x", interface: "org.gattway.Test", name: "Ping")
            let received = try await Self.collect(1, from: stream)
            #expect(received.first?.sender == world.server.uniqueName)
            #expect(try await world.server.releaseName("org.gattway.Emitter") == .released)
        }
    }

    @Test("a full buffer drops signals and counts every drop", arguments: DBusReader.allCases)
    func overflowIsCounted(reader: DBusReader) async throws {
        try await DBusTestBus.with(reader: reader) { world in
            let rule = DBusMatchRule(sender: world.server.uniqueName, interface: "org.gattway.Test")
            let small = try await world.client.signals(matching: rule, buffering: .dropOldest(limit: 4))
            let large = try await world.client.signals(matching: rule, buffering: .dropNewest(limit: 1000))
            for index in 0..<50 {
                try await world.server.emitSignal(
                    path: "/n", interface: "org.gattway.Test", name: "Tick", arguments: [.uint32(UInt32(index))])
            }
            // Both streams are fed in the same dispatch, so once `large` has all 50, `small` has seen them too.
            let all = try await Self.collect(50, from: large)
            #expect(all.map { $0.arguments.first?.uint32 } == (0..<50).map { UInt32($0) })
            #expect(small.droppedCount == 46)
            #expect(large.droppedCount == 0)
            #expect(world.client.droppedSignalCount == 46)
            let kept = try await Self.collect(4, from: small)
            #expect(kept.map { $0.arguments.first?.uint32 } == [46, 47, 48, 49])
        }
    }

    @Test(
        "NameOwnerChanged reports a name's owner arriving and leaving when its connection closes",
        arguments: DBusReader.allCases)
    func nameOwnerChangesAreSeen(reader: DBusReader) async throws {
        try await DBusTestBus.with(reader: reader) { world in
            let changes = try await world.client.nameOwnerChanges(of: "org.gattway.Owner")
            let owner = try await DBusConnection.connect(
                to: .address(world.bus.address), name: "owner", logger: DBusTestBus.logger)
            #expect(try await owner.requestName("org.gattway.Owner") == .primaryOwner)
            #expect(try await world.client.getNameOwner("org.gattway.Owner") == owner.uniqueName)
            let ownerName = owner.uniqueName
            await owner.close()
            let seen = try await withDeadline(.seconds(20), "two NameOwnerChanged signals") {
                var seen: [DBusNameOwnerChange] = []
                for await change in changes {
                    seen.append(change)
                    if seen.count == 2 { break }
                }
                return seen
            }
            #expect(
                seen == [
                    DBusNameOwnerChange(name: "org.gattway.Owner", oldOwner: nil, newOwner: ownerName),
                    DBusNameOwnerChange(name: "org.gattway.Owner", oldOwner: ownerName, newOwner: nil),
                ])
            #expect(try await world.client.nameHasOwner("org.gattway.Owner") == false)
        }
    }

    @Test(
        "a name a rule follows is answered from NameOwnerChanged without a call; any other name asks the bus",
        arguments: DBusReader.allCases)
    func followedNameHasOwnerWithoutACall(reader: DBusReader) async throws {
        try await DBusTestBus.with(reader: reader) { world in
            let name = "org.gattway.Owner"
            // A rule naming the well-known sender makes the connection follow who owns it.
            let followed = try await world.client.signals(
                matching: DBusMatchRule(sender: name, interface: "org.gattway.Test"))
            let calls = world.client.sentCallCount
            #expect(try await world.client.nameHasOwner(name) == false)
            #expect(world.client.sentCallCount == calls)

            let owner = try await DBusConnection.connect(
                to: .address(world.bus.address), name: "owner", logger: DBusTestBus.logger)
            #expect(try await owner.requestName(name) == .primaryOwner)
            try await Self.waitForOwner(of: name, on: world.client, toBe: true)
            #expect(world.client.sentCallCount == calls)
            await owner.close()
            try await Self.waitForOwner(of: name, on: world.client, toBe: false)
            #expect(world.client.sentCallCount == calls)

            // Not followed: the bus answers.
            #expect(try await world.client.nameHasOwner(world.server.uniqueName))
            #expect(world.client.sentCallCount == calls + 1)
            _ = followed
        }
    }

    /// Asks `connection` whether `name` has an owner until the answer is `owned`, failing after 20 s.
    static func waitForOwner(of name: String, on connection: DBusConnection, toBe owned: Bool) async throws {
        try await withDeadline(.seconds(20), "\(name) \(owned ? "owned" : "released")") {
            while try await connection.nameHasOwner(name) != owned {
                try await Task.sleep(for: .milliseconds(10))
            }
        }
    }

    @Test("a stream ends when its connection closes", arguments: DBusReader.allCases)
    func streamsEndOnClose(reader: DBusReader) async throws {
        try await DBusTestBus.with(reader: reader) { world in
            let stream = try await world.client.signals(matching: DBusMatchRule(interface: "org.gattway.Test"))
            await world.client.close()
            var count = 0
            for await _ in stream { count += 1 }
            #expect(count == 0)
            await #expect(throws: DBusError.self) {
                try await world.client.emitSignal(path: "/x", interface: "org.gattway.Test", name: "Late")
            }
        }
    }
}
