import BluetoothCore
import Testing

/// Advertised entries behave as a dictionary of the same keys and bytes would, whatever was set and removed, and
/// keep the order entries came in.
@Suite struct AdvertisedEntriesTests {
    /// One step of a sequence: bytes set under a key, or the key removed.
    enum Step: CustomStringConvertible {
        case set(UInt16, [UInt8])
        case remove(UInt16)

        var description: String {
            switch self {
            case .set(let key, let bytes): "set \(key) = \(bytes)"
            case .remove(let key): "remove \(key)"
            }
        }

        /// Three keys (one inline, two in the list after it), each set to no bytes or to two, or removed.
        static let all: [Step] = (0..<3).flatMap { key -> [Step] in
            [.set(key, []), .set(key, [UInt8(key), 0xFF]), .remove(key)]
        }
    }

    /// Entries beside the dictionary and key order they stand for.
    struct Model {
        var entries = AdvertisedEntries<UInt16>()
        var values: [UInt16: [UInt8]] = [:]
        var order: [UInt16] = []

        mutating func apply(_ step: Step) {
            switch step {
            case .set(let key, let bytes):
                entries[key] = bytes
                if values.updateValue(bytes, forKey: key) == nil { order.append(key) }
            case .remove(let key):
                entries[key] = nil
                values[key] = nil
                order.removeAll { $0 == key }
            }
        }

        /// What the entries get wrong about the model, if anything.
        var disagreement: String? {
            if entries.count != values.count || entries.isEmpty != values.isEmpty { return "count" }
            if entries.keys != order || entries.first?.key != order.first { return "order" }
            if Dictionary(uniqueKeysWithValues: entries.map { ($0.key, $0.value) }) != values { return "elements" }
            for probe in UInt16(0)..<4 {
                if entries[probe] != values[probe] { return "subscript of \(probe)" }
                if entries.dataCount(of: probe) != values[probe]?.count { return "dataCount(of: \(probe))" }
                if entries.value(for: probe) != values[probe] { return "value(for: \(probe))" }
                // What it holds, and bytes that differ from it in length or only in content.
                for bytes in [[], [UInt8(probe), 0xFF], [UInt8(probe), 0xEE], [0xEE]] as [[UInt8]] {
                    let held = bytes.withUnsafeBytes { entries.holds(probe, bytes: $0) }
                    if held != (values[probe] == bytes) { return "holds(\(probe), bytes: \(bytes))" }
                }
            }
            return nil
        }
    }

    /// Every sequence of up to five steps, each checked after every step.
    @Test func everySequenceOfSetsAndRemovalsAgreesWithADictionary() {
        var checked = 0
        func walk(_ model: Model, _ steps: [Step]) {
            guard steps.count < 5 else { return }
            for step in Step.all {
                var next = model
                next.apply(step)
                let path = steps + [step]
                checked += 1
                if let wrong = next.disagreement {
                    Issue.record("after \(path): \(wrong) differs, \(next.entries) against \(next.values)")
                    return
                }
                walk(next, path)
            }
        }
        walk(Model(), [])
        // 9 + 9² + … + 9⁵ sequences: none was cut short by a disagreement.
        #expect(Step.all.count == 9)
        #expect(checked == 66_429)
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
        // Removing it leaves the first where it was.
        entries[second] = nil
        Array(second.utf8).withUnsafeBytes { #expect(entries.key(utf8: $0) == nil) }
        Array(key.utf8).withUnsafeBytes { #expect(entries.key(utf8: $0) == key) }
        #expect(AdvertisedEntries<String>().description == "[:]")
    }
}
