import DBus
import Synchronization
import TestWorld
import Testing

@Suite("D-Bus signal taps", .timeLimit(.minutes(5)))
struct DBusSignalTapTests {
    @Test(
        "a tap sees matching signals first; what it takes no stream gets, what it declines streams get",
        arguments: DBusReader.allCases)
    func tapTakesOrDeclines(reader: DBusReader) async throws {
        try await DBusTestBus.with(reader: reader) { world in
            let rule = DBusMatchRule(sender: world.server.uniqueName, interface: "org.gattway.Test")
            let stream = try await world.client.signals(matching: rule)
            let tapped = Mutex<[UInt32]>([])
            // Takes even numbers, declines odd ones.
            let tap = try await world.client.tapSignals(matching: rule) { signal in
                guard let number = signal.arguments.first?.uint32 else { return false }
                tapped.withLock { $0.append(number) }
                return number % 2 == 0
            }
            for number in UInt32(0)..<10 {
                try await world.server.emitSignal(
                    path: "/n", interface: "org.gattway.Test", name: "Tick", arguments: [.uint32(number)])
            }
            let streamed = try await DBusSignalTests.collect(5, from: stream)
            #expect(streamed.map { $0.arguments.first?.uint32 } == [1, 3, 5, 7, 9])
            #expect(tapped.withLock { $0 } == Array(0..<10))

            // Once removed, the tap sees nothing and the stream gets everything again.
            await world.client.removeTap(tap)
            try await world.server.emitSignal(
                path: "/n", interface: "org.gattway.Test", name: "Tick", arguments: [.uint32(10)])
            let after = try await DBusSignalTests.collect(1, from: stream)
            #expect(after.first?.arguments.first?.uint32 == 10)
            #expect(tapped.withLock { $0.count } == 10)
        }
    }

    @Test(
        "a tap's rule filters like a stream's: other interfaces and members pass it by", arguments: DBusReader.allCases)
    func tapRuleFilters(reader: DBusReader) async throws {
        try await DBusTestBus.with(reader: reader) { world in
            let everything = try await world.client.signals(
                matching: DBusMatchRule(sender: world.server.uniqueName, interface: "org.gattway.Test"))
            let tapped = Mutex(0)
            _ = try await world.client.tapSignals(
                matching: DBusMatchRule(sender: world.server.uniqueName, interface: "org.gattway.Test", member: "Take")
            ) { _ in
                tapped.withLock { $0 += 1 }
                return true
            }
            try await world.server.emitSignal(path: "/a", interface: "org.gattway.Test", name: "Take")
            try await world.server.emitSignal(path: "/b", interface: "org.gattway.Test", name: "Keep")
            let streamed = try await DBusSignalTests.collect(1, from: everything)
            #expect(streamed.map(\.member) == ["Keep"])
            #expect(tapped.withLock { $0 } == 1)
        }
    }

    /// A tap compares its rule's fields as C strings made once, in an order of its own: every field must still
    /// hold, and a signal that misses any one of them goes to the streams.
    @Test(
        "a tap's rule filters by path, path namespace, first argument and sender as a stream's does",
        arguments: DBusReader.allCases)
    func tapRuleFiltersEveryField(reader: DBusReader) async throws {
        try await DBusTestBus.with(reader: reader) { world in
            let interface = "org.gattway.Test"
            let everything = try await world.client.signals(matching: DBusMatchRule(interface: interface))
            let taken = Mutex<[String]>([])
            let take: @Sendable (DBusSignal) -> Bool = { signal in
                taken.withLock { $0.append("\(signal.path) \(signal.arguments.first?.string ?? "-")") }
                return true
            }
            _ = try await world.client.tapSignals(
                matching: DBusMatchRule(
                    sender: world.server.uniqueName, interface: interface, member: "Take", path: "/exact",
                    arg0: "first")
            ) { take($0) }
            _ = try await world.client.tapSignals(
                matching: DBusMatchRule(
                    sender: world.server.uniqueName, interface: interface, member: "Take", pathNamespace: "/tree",
                    arg0: "first")
            ) { take($0) }
            _ = try await world.client.tapSignals(
                matching: DBusMatchRule(sender: ":1.999999", interface: interface, member: "Other")
            ) { take($0) }
            for (path, name, first) in [
                ("/exact", "Take", "first"), ("/exact", "Take", "second"), ("/exact/below", "Take", "first"),
                ("/tree/below", "Take", "first"), ("/treetop", "Take", "first"), ("/tree", "Keep", "first"),
                ("/exact", "Other", "first"),
            ] {
                try await world.server.emitSignal(
                    path: path, interface: interface, name: name, arguments: [.string(first)])
            }
            let streamed = try await DBusSignalTests.collect(5, from: everything)
            #expect(
                streamed.map { "\($0.path) \($0.member) \($0.arguments.first?.string ?? "-")" } == [
                    "/exact Take second", "/exact/below Take first", "/treetop Take first", "/tree Keep first",
                    "/exact Other first",
                ])
            #expect(taken.withLock { $0 } == ["/exact first", "/tree/below first"])
        }
    }

    @Test(
        "taps are offered a signal in registration order, up to the one that takes it, also after a removal",
        arguments: DBusReader.allCases)
    func tapsAreOfferedInRegistrationOrder(reader: DBusReader) async throws {
        try await DBusTestBus.with(reader: reader) { world in
            let rule = DBusMatchRule(sender: world.server.uniqueName, interface: "org.gattway.Test", arg0: "go")
            let stream = try await world.client.signals(matching: rule)
            let offered = Mutex<[Int]>([])
            var tokens: [DBusSignalTapToken] = []
            for index in 0..<8 {
                // The sixth takes the signal; the others only note that they were offered it.
                tokens.append(
                    try await world.client.tapMessages(matching: rule) { _ in
                        offered.withLock { $0.append(index) }
                        return index == 5
                    })
            }
            // Each removal waits until the signal before it was offered: emitting returns once the server sent it,
            // and a removal that reached the client's loop first would have taken that tap out of its turn.
            try await world.server.emitSignal(
                path: "/n", interface: "org.gattway.Test", name: "Tick", arguments: [.string("go")])
            try #require(await Self.offeredAtLeast(6, offered))
            await world.client.removeTap(tokens[2])
            try await world.server.emitSignal(
                path: "/n", interface: "org.gattway.Test", name: "Tick", arguments: [.string("go")])
            try #require(await Self.offeredAtLeast(11, offered))
            await world.client.removeTap(tokens[5])
            try await world.server.emitSignal(
                path: "/n", interface: "org.gattway.Test", name: "Tick", arguments: [.string("go")])
            // Only the last signal, which no tap took, reaches the stream; by then every tap has seen all three.
            _ = try await DBusSignalTests.collect(1, from: stream)
            #expect(offered.withLock { $0 } == [0, 1, 2, 3, 4, 5, 0, 1, 3, 4, 5, 0, 1, 3, 4, 6, 7])
        }
    }

    /// Whether the taps were offered `count` signals in all within 10 s.
    private static func offeredAtLeast(_ count: Int, _ offered: borrowing Mutex<[Int]>) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while offered.withLock({ $0.count }) < count {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return true
    }
}
