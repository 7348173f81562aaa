import DBus
import Polling
import Synchronization
import TestWorld
import Testing

/// Paced reading against a real dbus-daemon: the connection pauses reading only while every message it gets is a
/// signal a deferring tap matches first, loses and reorders nothing, and a call it makes while paused is answered.
@Suite("D-Bus reading paced while only deferrable signals arrive", .timeLimit(.minutes(2)))
struct DBusReadPacingTests {
    private static let interface = "org.gattway.Test"

    /// Taps `Tick` signals (their `uint32` argument) on the client; `defersReading` as given.
    private static func tapTicks(
        _ world: DBusTestBus, defersReading: Bool
    ) async throws -> AsyncStream<UInt32> {
        let (ticks, continuation) = AsyncStream.makeStream(of: UInt32.self)
        _ = try await world.client.tapMessages(
            matching: DBusMatchRule(sender: world.server.uniqueName, interface: interface, member: "Tick"),
            defersReading: defersReading
        ) { message in
            guard let number = message.decoded.arguments.first?.uint32 else { return false }
            continuation.yield(number)
            return true
        }
        return ticks
    }

    private static func tick(_ world: DBusTestBus, _ number: UInt32) async throws {
        try await world.server.emitSignal(path: "/n", interface: interface, name: "Tick", arguments: [.uint32(number)])
    }

    private static func collect(_ count: Int, from ticks: AsyncStream<UInt32>) async throws -> [UInt32] {
        try await withDeadline(.seconds(20), "\(count) ticks") {
            var received: [UInt32] = []
            for await number in ticks {
                received.append(number)
                if received.count == count { break }
            }
            return received
        }
    }

    /// Emits `count` ticks `gap` apart and expects each back from `ticks`, in order.
    private static func tickAndCollect(
        _ world: DBusTestBus, _ count: UInt32, every gap: Duration, from ticks: AsyncStream<UInt32>
    ) async throws {
        for number in 0..<count {
            try await tick(world, number)
            try await Task.sleep(for: gap)
        }
        #expect(try await collect(Int(count), from: ticks) == Array(0..<count))
    }

    /// Emits ticks from `start`, 20 ms apart, until the client has paused reading at least once (at most 20 s);
    /// how many it emitted.
    private static func tickUntilPaused(_ world: DBusTestBus, from start: UInt32 = 0) async throws -> UInt32 {
        var number = start
        let deadline = ContinuousClock.now + .seconds(20)
        while world.client.readPauseCount == 0 {
            try #require(ContinuousClock.now < deadline, "reading never paused")
            try await tick(world, number)
            number += 1
            try await Task.sleep(for: .milliseconds(20))
        }
        return number - start
    }

    @Test(
        "signals a deferring tap matches are read in paced batches, every one delivered in order",
        arguments: DBusReader.allCases)
    func deferrableSignalsArePaced(reader: DBusReader) async throws {
        try await DBusTestBus.with(reader: reader) { world in
            await world.client.paceReading(every: .milliseconds(20))
            let ticks = try await Self.tapTicks(world, defersReading: true)
            try await Self.tickAndCollect(world, 200, every: .milliseconds(2), from: ticks)
            #expect(world.client.readPauseCount > 0)
        }
    }

    @Test("signals no deferring tap matches first keep reading prompt: it never pauses", arguments: DBusReader.allCases)
    func otherSignalsAreNotPaced(reader: DBusReader) async throws {
        try await DBusTestBus.with(reader: reader) { world in
            await world.client.paceReading(every: .milliseconds(20))
            let ticks = try await Self.tapTicks(world, defersReading: false)
            try await Self.tickAndCollect(world, 200, every: .milliseconds(2), from: ticks)
            #expect(world.client.readPauseCount == 0)
        }
    }

    @Test(
        "signals further apart than a pause lasts are read as they come: a pause would gather nothing",
        arguments: DBusReader.allCases)
    func sparseSignalsAreNotPaced(reader: DBusReader) async throws {
        try await DBusTestBus.with(reader: reader) { world in
            await world.client.paceReading(every: .milliseconds(5))
            let ticks = try await Self.tapTicks(world, defersReading: true)
            try await Self.tickAndCollect(world, 12, every: .milliseconds(60), from: ticks)
            #expect(world.client.readPauseCount == 0)
        }
    }

    @Test("without pacing, reading never pauses", arguments: DBusReader.allCases)
    func unpacedConnectionNeverPauses(reader: DBusReader) async throws {
        try await DBusTestBus.with(reader: reader) { world in
            let ticks = try await Self.tapTicks(world, defersReading: true)
            try await Self.tickAndCollect(world, 100, every: .milliseconds(5), from: ticks)
            #expect(world.client.readPauseCount == 0)
        }
    }

    @Test(
        "a call made while reading is paused gets its reply, and the signals held back arrive with it",
        arguments: DBusReader.allCases)
    func callEndsThePause(reader: DBusReader) async throws {
        try await DBusTestBus.with(reader: reader) { world in
            try await world.server.export(
                path: "/org/gattway/Test", interfaces: [DBusInterface(name: Self.interface, methods: [echoMethod])])
            // Far longer than the call's timeout: only the call itself can end this pause in time.
            await world.client.paceReading(every: .seconds(60))
            let ticks = try await Self.tapTicks(world, defersReading: true)
            let emitted = try await Self.tickUntilPaused(world)
            // Held back by the pause: these wait in the socket until something ends it.
            try await Self.tick(world, emitted)
            try await Self.tick(world, emitted + 1)
            #expect(try await world.call("Echo", [.string("paused")], timeout: .seconds(5)) == [.string("paused")])
            #expect(try await Self.collect(Int(emitted) + 2, from: ticks) == Array(0..<(emitted + 2)))
        }
    }

    @Test(
        "the signals a pause held back are dispatched in one turn (a few under load), not 2 KiB a turn, announced as a burst"
    )
    func heldBackSignalsAreDispatchedInOneTurn() async throws {
        try await DBusTestBus.with { world in
            // Long enough to emit the held-back ticks inside it even on a loaded machine, short enough to end by
            // itself: this pause must end by its timer, the way a batch of reports is read.
            await world.client.paceReading(every: .seconds(15))
            let loop = world.client.loop
            let (ticks, continuation) = AsyncStream.makeStream(of: Tick.self)
            _ = try await world.client.tapMessages(
                matching: DBusMatchRule(sender: world.server.uniqueName, interface: Self.interface, member: "Tick"),
                defersReading: true
            ) { message in
                guard let number = message.decoded.arguments.first?.uint32 else { return false }
                continuation.yield(Tick(number: number, turn: loop.currentTurn, burst: loop.expectsBurst))
                return true
            }
            let emitted = try await Self.tickUntilPaused(world)
            // About 60 bytes each: 400 of them are about a dozen of libdbus's 2 KiB reads.
            let heldBack = UInt32(400)
            for number in emitted..<(emitted + heldBack) { try await Self.tick(world, number) }
            // dbus-daemon handles one connection's messages in order: once it has answered the server, it has routed
            // every tick the server sent before into the client's socket, all of them there before the pause ends.
            #expect(try await world.server.nameHasOwner(world.client.uniqueName))
            let total = emitted + heldBack
            // Normally all come when this pause ends. Under load the server's ticks may reach the socket after it
            // ended; reading then pauses again, so the last come when a later pause ends, up to 15 s after the rest.
            let received = try await withDeadline(.seconds(45), "\(total) ticks") {
                var received: [Tick] = []
                for await tick in ticks {
                    received.append(tick)
                    if received.count == Int(total) { break }
                }
                return received
            }
            #expect(received.map(\.number) == Array(0..<total))
            // One turn when every tick is in the socket as the pause ends. On a loaded machine dbus-daemon may still be
            // delivering them then, and the late ones come in a few more turns. Read 2 KiB a turn, they take eleven.
            let turns = Set(received.suffix(Int(heldBack)).map(\.turn))
            #expect(turns.count <= 5, "the held-back ticks came in \(turns.count) turns")
            // Writers may hold back what the batch makes from its first write (the MQTT client corks its socket).
            #expect(received[Int(emitted)].burst, "the turn reading what the pause gathered expects a burst")
            #expect(!received[0].burst, "a turn reading as messages come expects none")
        }
    }

    /// A tick as the handler saw it: its number, the loop turn and whether that turn expected a burst.
    private struct Tick: Sendable {
        let number: UInt32
        let turn: UInt64
        let burst: Bool
    }

    @Test("turning pacing off ends a pause at once", arguments: DBusReader.allCases)
    func turningPacingOffResumes(reader: DBusReader) async throws {
        try await DBusTestBus.with(reader: reader) { world in
            await world.client.paceReading(every: .seconds(60))
            let ticks = try await Self.tapTicks(world, defersReading: true)
            let emitted = try await Self.tickUntilPaused(world)
            try await Self.tick(world, emitted)
            await world.client.paceReading(every: nil)
            #expect(try await Self.collect(Int(emitted) + 1, from: ticks) == Array(0...emitted))
        }
    }
}
