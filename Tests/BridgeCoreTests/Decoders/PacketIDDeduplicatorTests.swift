import BluetoothCore
import BridgeCore
import Testing

@Suite struct PacketIDDeduplicatorTests {
    let sensor = address("54:48:E6:8F:80:A5")
    let start = ContinuousClock.Instant.now

    @Test func aRepeatedPacketIDIsRefusedAndTheNextAccepted() {
        var deduplicator = PacketIDDeduplicator<ContinuousClock.Instant>()
        let accepted1 = deduplicator.accept(packetID: 5, from: sensor, at: start)
        #expect(accepted1)
        let accepted2 = deduplicator.accept(packetID: 5, from: sensor, at: start + .milliseconds(100))
        #expect(!accepted2)
        let accepted3 = deduplicator.accept(packetID: 6, from: sensor, at: start + .milliseconds(200))
        #expect(accepted3)
    }

    @Test func anOlderPacketIDIsRefusedAndTheIDWrapsAt256() {
        var deduplicator = PacketIDDeduplicator<ContinuousClock.Instant>()
        let accepted4 = deduplicator.accept(packetID: 250, from: sensor, at: start)
        #expect(accepted4)
        let accepted5 = deduplicator.accept(packetID: 249, from: sensor, at: start + .milliseconds(10))
        #expect(!accepted5)
        let accepted6 = deduplicator.accept(packetID: 2, from: sensor, at: start + .milliseconds(20))
        #expect(accepted6)
        let accepted7 = deduplicator.accept(packetID: 255, from: sensor, at: start + .milliseconds(30))
        #expect(!accepted7)
    }

    @Test func aJumpOfAWindowOrMoreIsRefusedUntilTheDeviceHasBeenSilent() {
        var deduplicator = PacketIDDeduplicator<ContinuousClock.Instant>()
        let accepted8 = deduplicator.accept(packetID: 100, from: sensor, at: start)
        #expect(accepted8)
        let accepted9 = deduplicator.accept(packetID: 0, from: sensor, at: start + .seconds(1))
        #expect(!accepted9)
        let accepted10 = deduplicator.accept(packetID: 0, from: sensor, at: start + .seconds(6))
        #expect(accepted10)
    }

    @Test func devicesAreTrackedApart() {
        var deduplicator = PacketIDDeduplicator<ContinuousClock.Instant>()
        let accepted11 = deduplicator.accept(packetID: 7, from: sensor, at: start)
        #expect(accepted11)
        let accepted12 = deduplicator.accept(packetID: 7, from: address("54:48:E6:8F:80:A6"), at: start)
        #expect(accepted12)
    }

    /// A deduplicator of one device (the bridge keeps one per device) answers as a larger one does for that
    /// device, over repeats, steps, wraps, jumps and silences; another device replaces it.
    @Test func aCapacityOfOneAnswersAsALargerOneForItsDevice() {
        var alone = PacketIDDeduplicator<ContinuousClock.Instant>(capacity: 1)
        var shared = PacketIDDeduplicator<ContinuousClock.Instant>()
        var generator = SystemRandomNumberGenerator()
        var now = start
        for _ in 0..<5_000 {
            // Mostly the gaps of a sensor repeating itself, now and then a silence past the 4 s reset.
            let silent = Int.random(in: 0..<50, using: &generator) == 0
            now = now + .milliseconds(Int.random(in: silent ? 3_500...6_000 : 0...900, using: &generator))
            let id = UInt32.random(in: 0...255, using: &generator)
            let byAlone = alone.accept(packetID: id, from: sensor, at: now)
            let byShared = shared.accept(packetID: id, from: sensor, at: now)
            #expect(byAlone == byShared, "id \(id)")
        }
        #expect(alone.count == 1)
        let other = address("54:48:E6:8F:80:A6")
        let lastID = UInt32(7)
        let otherFirst = alone.accept(packetID: lastID, from: other, at: now)
        let otherRepeat = alone.accept(packetID: lastID, from: other, at: now)
        let sensorAgain = alone.accept(packetID: lastID, from: sensor, at: now)
        #expect(otherFirst)
        #expect(!otherRepeat, "the other device is remembered now")
        #expect(sensorAgain, "the first device was forgotten")
        #expect(alone.count == 1)
    }

    @Test func memoryIsBoundedByCapacityForgettingTheLeastRecent() {
        var deduplicator = PacketIDDeduplicator<ContinuousClock.Instant>(capacity: 3)
        for last in UInt8(1)...10 {
            _ = deduplicator.accept(packetID: 1, from: address("00:00:00:00:00:\(Hex.string([last]))"), at: start)
        }
        #expect(deduplicator.count == 3)
        // The first address was forgotten, so its repeat counts as new; the last is remembered.
        let accepted13 = deduplicator.accept(packetID: 1, from: address("00:00:00:00:00:01"), at: start)
        #expect(accepted13)
        let accepted14 = deduplicator.accept(packetID: 1, from: address("00:00:00:00:00:0a"), at: start)
        #expect(!accepted14)
    }

    /// Accepting the most recently accepted device again (updated in place) and an older one (moved to the end)
    /// both leave the least recently accepted first in line to be forgotten.
    @Test func theLeastRecentlyAcceptedIsForgottenWhateverOrderAcceptsCameIn() {
        var deduplicator = PacketIDDeduplicator<ContinuousClock.Instant>(capacity: 2)
        let a = address("00:00:00:00:00:0a")
        let b = address("00:00:00:00:00:0b")
        func accept(_ id: UInt32, from device: BluetoothAddress) -> Bool {
            deduplicator.accept(packetID: id, from: device, at: start)
        }
        #expect(accept(1, from: a))
        #expect(accept(1, from: b))
        #expect(accept(2, from: b))  // b was the last: in place
        #expect(!accept(2, from: b), "the in-place update is remembered")
        #expect(accept(2, from: a))  // a moves behind b
        #expect(accept(1, from: address("00:00:00:00:00:0c")))  // b is forgotten
        #expect(deduplicator.count == 2)
        #expect(!accept(2, from: a), "a was remembered")
        #expect(accept(2, from: b), "b was forgotten, so its repeat counts as new")
    }

    /// A replayed BTHome advertisement decodes to the same packet id and is refused.
    @Test func aReplayedBTHomeAdvertisementIsRefused() throws {
        var deduplicator = PacketIDDeduplicator<ContinuousClock.Instant>()
        let facts = serviceFacts(0xFCD2, "400005015d029808", address: "54:48:E6:8F:80:A5")
        let first = try #require(try BTHomeDecoder().decode(facts, context: DecodingContext()).packetID)
        let replay = try #require(try BTHomeDecoder().decode(facts, context: DecodingContext()).packetID)
        let accepted15 = deduplicator.accept(packetID: first, from: facts.address, at: start)
        #expect(accepted15)
        let accepted16 = deduplicator.accept(packetID: replay, from: facts.address, at: start + .seconds(1))
        #expect(!accepted16)
    }

    /// 32-bit encryption counters: a repeat or a lower counter is a replay; a higher one is new.
    @Test func encryptionCountersUseTheFullWidth() {
        var counters = PacketIDDeduplicator<ContinuousClock.Instant>(
            modulus: 1 << 32, window: 1 << 31, resetAfter: .seconds(86_400))
        let accepted17 = counters.accept(packetID: 0x3322_1100, from: sensor, at: start)
        #expect(accepted17)
        let accepted18 = counters.accept(packetID: 0x3322_1100, from: sensor, at: start + .seconds(10))
        #expect(!accepted18)
        let accepted19 = counters.accept(packetID: 0x3322_10FF, from: sensor, at: start + .seconds(20))
        #expect(!accepted19)
        let accepted20 = counters.accept(packetID: 0x3322_1101, from: sensor, at: start + .seconds(30))
        #expect(accepted20)
    }
}
