import BluetoothCore
import Glibc

/// The device paths of advertisement reports, each made into a String once and handed on as that same String
/// afterwards: among a thousand advertisers every report names another device than the report before, and a path
/// made anew cost an allocation, a copy, its release, and a comparison byte by byte wherever it was compared with the
/// path kept for that device (two Strings of the same storage compare equal at once).
///
/// An open-addressed table found by a fast hash of the bytes (`hash`), probing at most `maxProbes` slots: the paths
/// name devices by their addresses, which a radio peer chooses, so a path whose slots are all taken is simply made
/// anew (as every path was before), and a full table of the largest size starts over empty. Memory is bounded by
/// `maxPaths` paths of at most `maxPathLength` bytes.
///
/// Used on the D-Bus connection's loop only, by the tap that owns it.
package struct DevicePathInterner {
    /// A path and its identity: equal identities mean the same path; 0 is a path not kept here (compare those as
    /// Strings).
    package struct Interned: Sendable {
        package var path: String
        package var identity: UInt64
    }

    /// The table grows from `initialCapacity` slots by doubling, kept at most three quarters full, up to
    /// `maxCapacity` slots: a few devices cost a few slots.
    package static let initialCapacity = 64
    package static let maxCapacity = 4_096
    package static var maxPaths: Int { maxCapacity / 4 * 3 }
    package static let maxProbes = 8
    package static let maxPathLength = 96

    private typealias Slot = (hash: UInt64, path: String, identity: UInt64)
    private var slots: [Slot?]
    package private(set) var count = 0
    private var nextIdentity: UInt64 = 1

    package init() {
        slots = Array(repeating: nil, count: Self.initialCapacity)
    }

    /// The path with these bytes: the String kept for them, else one made (and kept, when there is room).
    package mutating func path(of bytes: UnsafeRawBufferPointer) -> Interned {
        guard bytes.count <= Self.maxPathLength else { return Interned(path: Self.string(bytes), identity: 0) }
        let hash = Self.hash(bytes)
        switch find(bytes, hash: hash) {
        case .found(let slot):
            return Interned(path: slot.path, identity: slot.identity)
        case .free(let index):
            let path = Self.string(bytes)
            // A path that is not UTF-8 comes out repaired, with other bytes: it would never be found again.
            guard path.hasUTF8(bytes) else { return Interned(path: path, identity: 0) }
            let slot = (hash, path, nextIdentity)
            nextIdentity += 1
            keep(slot, at: index)
            return Interned(path: path, identity: slot.2)
        case .full:
            return Interned(path: Self.string(bytes), identity: 0)
        }
    }

    private enum Lookup {
        case found(Slot)
        case free(Int)
        case full
    }

    private func find(_ bytes: UnsafeRawBufferPointer, hash: UInt64) -> Lookup {
        let mask = slots.count - 1
        var index = Int(truncatingIfNeeded: hash) & mask
        for _ in 0..<Self.maxProbes {
            guard let slot = slots[index] else { return .free(index) }
            if slot.hash == hash, slot.path.hasUTF8(bytes) { return .found(slot) }
            index = (index + 1) & mask
        }
        return .full
    }

    private mutating func keep(_ slot: Slot, at index: Int) {
        guard count + 1 > slots.count / 4 * 3 else {
            slots[index] = slot
            count += 1
            return
        }
        // Three quarters full: twice the slots, or, at the largest table, an empty one (starting over loses nothing
        // but the reuse: every path is made again once).
        let kept = slots.count < Self.maxCapacity ? slots.compactMap { $0 } + [slot] : [slot]
        slots = Array(repeating: nil, count: min(slots.count * 2, Self.maxCapacity))
        count = 0
        for slot in kept { insert(slot) }
    }

    private mutating func insert(_ slot: Slot) {
        let mask = slots.count - 1
        var index = Int(truncatingIfNeeded: slot.hash) & mask
        // A path that finds no free slot within `maxProbes` is not kept.
        for _ in 0..<Self.maxProbes {
            guard slots[index] != nil else {
                slots[index] = slot
                count += 1
                return
            }
            index = (index + 1) & mask
        }
    }

    private static func string(_ bytes: UnsafeRawBufferPointer) -> String {
        String(decoding: bytes, as: UTF8.self)
    }

    /// A hash taken eight bytes at a time (a path is some forty bytes): each word mixed in by a multiplication and
    /// a shift, then the whole finished as MurmurHash3's 64-bit finaliser does, so that every byte reaches the low
    /// bits that pick the slot. Some fifty instructions where a seeded SipHash of a String costs some three hundred;
    /// collisions cost at most a path made anew (see above).
    private static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash = 0xcbf2_9ce4_8422_2325 ^ UInt64(bytes.count)
        var offset = 0
        while bytes.count - offset >= 8 {
            hash = mix(hash, bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            offset += 8
        }
        var tail: UInt64 = 0
        for index in offset..<bytes.count { tail = tail << 8 | UInt64(bytes[index]) }
        hash = mix(hash, tail)
        hash = (hash ^ (hash >> 33)) &* 0xff51_afd7_ed55_8ccd
        hash = (hash ^ (hash >> 33)) &* 0xc4ce_b9fe_1a85_ec53
        return hash ^ (hash >> 33)
    }

    @inline(__always)
    private static func mix(_ hash: UInt64, _ word: UInt64) -> UInt64 {
        let mixed = (hash ^ word) &* 0x9e37_79b9_7f4a_7c15
        return mixed ^ (mixed >> 32)
    }
}
