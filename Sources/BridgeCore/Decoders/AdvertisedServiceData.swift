package import BluetoothCore

/// The service data of one advertisement by service UUID, read like a dictionary.
///
/// An advertisement carries one service data entry nearly always and a few at most, and every advertisement with a
/// new reading builds one of these and looks in it several times: the first entry is kept in place and the others
/// in a short list, where a dictionary allocated its storage and hashed the 16-byte UUID on every insert and lookup.
package struct AdvertisedServiceData: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    private var first: (uuid: BluetoothUUID, data: [UInt8])?
    private var rest: [(uuid: BluetoothUUID, data: [UInt8])] = []

    package init() {}

    /// A repeated UUID keeps its last data, as bluetoothd keeps one entry per UUID.
    package init(dictionaryLiteral elements: (BluetoothUUID, [UInt8])...) {
        for (uuid, data) in elements { self[uuid] = data }
    }

    /// The entries of service data as bluetoothd keys it, by UUID text read through `uuids`; a key that names no
    /// UUID is skipped.
    package init(byUUIDText entries: AdvertisedEntries<String>, uuids: inout UUIDTextCache) {
        // The one entry of nearly every advertisement is taken as it is: iterating copied it out and destroyed it.
        guard let only = entries.first else { return }
        if entries.count == 1 {
            if let uuid = uuids.uuid(of: only.key) { first = (uuid, only.value) }
            return
        }
        for (text, data) in entries {
            if let uuid = uuids.uuid(of: text) { self[uuid] = data }
        }
    }

    /// How many UUIDs carry data.
    package var count: Int { (first == nil ? 0 : 1) + rest.count }

    /// Calls `body` with the 16-bit alias of each UUID that has one, in place: no entry is copied out.
    func forEachUUID16(_ body: (UInt16) -> Void) {
        if let uuid16 = first?.uuid.uuid16 { body(uuid16) }
        rest.withUnsafeBufferPointer { entries in
            for index in entries.indices { if let uuid16 = entries[index].uuid.uuid16 { body(uuid16) } }
        }
    }

    /// How many bytes `uuid` carries, read in place; nil when it carries none. What a format's `recognizes` asks:
    /// the data itself, returned, was retained and released for each of the formats `auto` tries.
    package func dataCount(of uuid: BluetoothUUID) -> Int? {
        if holdsFirst(uuid) { return first?.data.count }
        return rest.withUnsafeBufferPointer { entries in
            for index in entries.indices where entries[index].uuid == uuid { return entries[index].data.count }
            return nil
        }
    }

    /// The data under `uuid`; setting nil removes it.
    package subscript(uuid: BluetoothUUID) -> [UInt8]? {
        get {
            if let first, first.uuid == uuid { return first.data }
            return rest.first(where: { $0.uuid == uuid })?.data
        }
        set {
            if holdsFirst(uuid) {
                first = nil
            } else if let index = rest.firstIndex(where: { $0.uuid == uuid }) {
                rest.remove(at: index)
            }
            guard let newValue else {
                if first == nil, !rest.isEmpty { first = rest.removeFirst() }
                return
            }
            if first == nil { first = (uuid, newValue) } else { rest.append((uuid, newValue)) }
        }
    }

    /// Whether `first` holds `uuid`. Compared as UUIDs: `first?.uuid == uuid` compared optionals, through the generic
    /// `==` of Optional and BluetoothUUID's witness table, for every entry set.
    private func holdsFirst(_ uuid: BluetoothUUID) -> Bool {
        guard let held = first?.uuid else { return false }
        return held == uuid
    }

    /// The same UUIDs with the same data, in whatever order they came.
    package static func == (lhs: Self, rhs: Self) -> Bool {
        guard lhs.count == rhs.count else { return false }
        if let first = lhs.first, rhs[first.uuid] != first.data { return false }
        return lhs.rest.allSatisfy { rhs[$0.uuid] == $0.data }
    }
}
