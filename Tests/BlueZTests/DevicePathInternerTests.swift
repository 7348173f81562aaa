import BlueZ
import Testing

/// The device paths of advertisement reports are made into Strings once: a path read again must come back as the
/// same path with the same identity, a different path never with another's, and the table must stay bounded.
@Suite("Device paths interned")
struct DevicePathInternerTests {
    private static func path(_ index: Int) -> String {
        let address = (0..<6).map { byte in
            let value = (index >> (8 * (5 - byte))) & 0xFF
            return (value < 16 ? "0" : "") + String(value, radix: 16, uppercase: true)
        }
        return "/org/bluez/hci0/dev_" + address.joined(separator: "_")
    }

    private static func intern(_ path: String, in interner: inout DevicePathInterner) -> DevicePathInterner.Interned {
        Array(path.utf8).withUnsafeBytes { interner.path(of: $0) }
    }

    @Test("a path read again is the same path with the same identity; another path has another")
    func samePathSameIdentity() {
        var interner = DevicePathInterner()
        let first = Self.intern(Self.path(1), in: &interner)
        let second = Self.intern(Self.path(2), in: &interner)
        let again = Self.intern(Self.path(1), in: &interner)
        #expect(first.path == Self.path(1))
        #expect(second.path == Self.path(2))
        #expect(first.identity != 0 && second.identity != 0)
        #expect(first.identity != second.identity)
        #expect(again.identity == first.identity)
        #expect(again.path == first.path)
        #expect(interner.count == 2)
    }

    @Test("the table grows with the devices and keeps every path it holds")
    func growsAndKeeps() {
        var interner = DevicePathInterner()
        let count = 1_000
        let identities = (0..<count).map { Self.intern(Self.path($0), in: &interner).identity }
        // A path may go unkept only when all its probed slots are taken; among 1,000 paths in a table kept at most
        // three quarters full that is rare, never most of them.
        #expect(identities.filter { $0 != 0 }.count > count * 9 / 10)
        #expect(Set(identities.filter { $0 != 0 }).count == identities.filter { $0 != 0 }.count)
        #expect(interner.count > DevicePathInterner.initialCapacity)
        for index in 0..<count {
            let again = Self.intern(Self.path(index), in: &interner)
            #expect(again.path == Self.path(index))
            if identities[index] != 0 { #expect(again.identity == identities[index], "path \(index)") }
        }
    }

    @Test("a full table of the largest size starts over, and paths read afterwards are still right")
    func startsOverWhenFull() {
        var interner = DevicePathInterner()
        // Past the largest table once: some paths go unkept (their probed slots taken), so it fills a little later.
        let count = DevicePathInterner.maxPaths + DevicePathInterner.maxPaths / 4
        var largest = 0
        for index in 0..<count {
            let interned = Self.intern(Self.path(index), in: &interner)
            #expect(interned.path == Self.path(index))
            largest = max(largest, interner.count)
        }
        #expect(largest <= DevicePathInterner.maxPaths)
        #expect(interner.count < DevicePathInterner.maxPaths / 2, "it started over: \(interner.count)")
        let last = Self.intern(Self.path(count - 1), in: &interner)
        #expect(last.path == Self.path(count - 1))
    }

    @Test("a path that is too long or not UTF-8 is made but not kept")
    func notKept() {
        var interner = DevicePathInterner()
        let long = "/org/bluez/hci0/" + String(repeating: "d", count: DevicePathInterner.maxPathLength)
        let interned = Self.intern(long, in: &interner)
        #expect(interned.path == long)
        #expect(interned.identity == 0)
        let invalid: [UInt8] = Array("/org/bluez/hci0/dev_".utf8) + [0xFF, 0xFE]
        let repaired = invalid.withUnsafeBytes { interner.path(of: $0) }
        #expect(repaired.identity == 0)
        #expect(repaired.path == String(decoding: invalid, as: UTF8.self))
        #expect(interner.count == 0)
    }
}
