import BluetoothCore
import Testing

/// Advertised entries behave as a dictionary of the same keys and bytes would, whatever was set and removed, and
/// keep the order entries came in.
@Suite struct AdvertisedEntriesTests {
    /// A seeded generator, so that a failure names a run that can be repeated.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    @Test(arguments: 1...40)
    func setsAndRemovalsAgreeWithADictionary(seed: UInt64) {
        var random = Generator(state: seed)
        var entries = AdvertisedEntries<UInt16>()
        var model: [UInt16: [UInt8]] = [:]
        var order: [UInt16] = []
        for step in 0..<60 {
            let key = UInt16.random(in: 0..<5, using: &random)
            if Int.random(in: 0..<3, using: &random) == 0 {
                entries[key] = nil
                model[key] = nil
                order.removeAll { $0 == key }
            } else {
                let value = (0..<Int.random(in: 0..<4, using: &random)).map { _ in
                    UInt8.random(in: 0...255, using: &random)
                }
                entries[key] = value
                if model.updateValue(value, forKey: key) == nil { order.append(key) }
            }
            let context: Comment = "seed \(seed), step \(step): \(entries) against \(model)"
            #expect(entries.count == model.count, context)
            #expect(entries.isEmpty == model.isEmpty, context)
            #expect(entries.keys == order, context)
            #expect(entries.first?.key == order.first, context)
            #expect(Dictionary(uniqueKeysWithValues: entries.map { ($0.key, $0.value) }) == model, context)
            for probe in UInt16(0)..<6 {
                #expect(entries[probe] == model[probe], context)
                #expect(entries.dataCount(of: probe) == model[probe]?.count, context)
                #expect(entries.value(for: probe) == model[probe], context)
                for bytes in [model[probe] ?? [], [0xFF]] {
                    let held = bytes.withUnsafeBytes { entries.holds(probe, bytes: $0) }
                    #expect(held == (model[probe] == bytes), context)
                }
            }
        }
    }

    @Test func equalEntriesInAnotherOrderAreEqualAndHashAlike() {
        let a: AdvertisedEntries<String> = ["fcd2": [1, 2], "fe95": [3], "181a": []]
        let b: AdvertisedEntries<String> = ["181a": [], "fcd2": [1, 2], "fe95": [3]]
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(Set([a, b]).count == 1)
        #expect(a != ["fcd2": [1, 2], "fe95": [3]])
        #expect(a != ["fcd2": [1, 2], "fe95": [4], "181a": []])
        #expect(a != ["fcd2": [1, 2], "fe95": [3], "181b": []])
    }

    @Test func aRepeatedKeyKeepsItsLastBytesInItsFirstPlace() {
        let entries: AdvertisedEntries<UInt16> = [1: [1], 2: [2], 1: [3]]
        #expect(entries.count == 2)
        #expect(entries.keys == [1, 2])
        #expect(entries[1] == [3])
    }

    @Test func keysAreFoundByTheirUTF8AndBytesAreCopiedIn() {
        var entries = AdvertisedEntries<String>()
        let key = "0000fcd2-0000-1000-8000-00805f9b34fb"
        var bytes: [UInt8] = [0x40, 0x02, 0xC4, 0x09]
        bytes.withUnsafeBytes { entries.set($0, for: key) }
        bytes[0] = 0
        #expect(entries[key] == [0x40, 0x02, 0xC4, 0x09])
        Array(key.utf8).withUnsafeBytes { name in
            #expect(entries.key(utf8: name) == key)
            ([0x40, 0x02, 0xC4, 0x09] as [UInt8]).withUnsafeBytes { #expect(entries.holds(utf8: name, bytes: $0)) }
            ([0x40, 0x02, 0xC4] as [UInt8]).withUnsafeBytes { #expect(!entries.holds(utf8: name, bytes: $0)) }
        }
        Array("0000fcd2".utf8).withUnsafeBytes { name in
            #expect(entries.key(utf8: name) == nil)
            ([0x40, 0x02, 0xC4, 0x09] as [UInt8]).withUnsafeBytes { #expect(!entries.holds(utf8: name, bytes: $0)) }
        }
        #expect(entries.description == #"["0000fcd2-0000-1000-8000-00805f9b34fb": [64, 2, 196, 9]]"#)
        // A key after the first is found as well.
        let second = "0000fe95-0000-1000-8000-00805f9b34fb"
        ([0x30, 0x58] as [UInt8]).withUnsafeBytes { entries.set($0, for: second) }
        Array(second.utf8).withUnsafeBytes { name in
            #expect(entries.key(utf8: name) == second)
            ([0x30, 0x58] as [UInt8]).withUnsafeBytes { #expect(entries.holds(utf8: name, bytes: $0)) }
            ([0x40, 0x02, 0xC4, 0x09] as [UInt8]).withUnsafeBytes { #expect(!entries.holds(utf8: name, bytes: $0)) }
        }
        entries[second] = nil
        #expect(AdvertisedEntries<String>().description == "[:]")
    }
}
