package import BluetoothCore
package import DBus
import Glibc

extension BlueZClient {
    /// Advertised data a device's PropertiesChanged may carry before it is declined as hostile: more entries or
    /// bytes than any advertisement (extended ones hold 1,650 bytes) are left to the general path, which bounds the
    /// tree instead.
    static let maxAdvertEntries = 32
    static let maxAdvertBytes = 1_650
    static let maxServiceUUIDLength = 64

    /// Hands each advertisement report that bluetoothd makes of a device (a `Device1` PropertiesChanged carrying
    /// only RSSI, TxPower, ManufacturerData and ServiceData) to `handler`, on the D-Bus connection's loop as the
    /// signal is dispatched. When `handler` returns true the report is taken and `watch()` does not see it; when
    /// it returns false (or the signal carries anything else) the signal goes on to `watch()` as usual.
    ///
    /// The passive advertisement hot path: the signal is read in place (`DBusSignalMessage.withBodyInPlace`), not
    /// decoded into `DBusValue`s, and no task or actor hand-off happens per advertisement. `handler` must be quick.
    package func tapDeviceAdverts(
        _ handler: @escaping @Sendable (_ devicePath: String, _ properties: [BLEDeviceProperty]) -> Bool
    ) async throws -> DBusSignalTapToken {
        let rule = DBusMatchRule(
            sender: BlueZName.service, interface: BlueZName.properties, member: "PropertiesChanged",
            arg0: BlueZName.device)
        let last = LastAdvertReport()
        // Reports can wait for paced reading: presence and sensor readings do not hang on milliseconds.
        return try await connection.tapMessages(matching: rule, defersReading: true) { message in
            guard let report = Self.advertReport(message, after: last) else { return false }
            return handler(report.path, report.properties)
        }
    }

    /// The device path and advert properties of an advertisement report (see `advertProperties`), read after
    /// `last`, the report read before it: the path and advertised data it repeats reuse their storage.
    package static func advertReport(
        _ message: DBusSignalMessage, after last: LastAdvertReport
    ) -> (path: String, properties: [BLEDeviceProperty])? {
        guard let pathBytes = message.pathBytes else { return nil }
        let path = last.paths.path(of: pathBytes)
        // A path kept by the interner is the same as the last one when its identity is (after the table started
        // over, the same path may come back with another: then the reuse is lost once, nothing else).
        let samePath = path.identity != 0 ? path.identity == last.pathIdentity : path.path == last.path
        if !samePath { last.forget(for: path) }
        guard let properties = advertProperties(of: message, reusing: last) else { return nil }
        return (path.path, properties)
    }

    /// The advert properties of `PropertiesChanged(Device1, {…}, [])`, or nil when it carries any other property,
    /// a value of an unexpected type or size, or invalidates one, or when its body cannot be found where libdbus keeps
    /// it (it is read there, `DBusSignalMessage.withBodyInPlace`). Advertised data equal to what `last` holds (the
    /// same device's previous report) is handed on as that same storage, and `last` keeps what this one carried.
    ///
    /// A body that repeats the one `last` read, byte for byte but for the RSSI's value, is not read again: bluetoothd
    /// sends every report of a device while duplicates are on, and one whose data did not change differs at most in
    /// the RSSI (the same bytes in the same byte order hold the same properties, and an `n` value is any 2 bytes).
    package static func advertProperties(
        of message: DBusSignalMessage, reusing last: LastAdvertReport = LastAdvertReport()
    ) -> [BLEDeviceProperty]? {
        var properties: [BLEDeviceProperty]?
        _ = message.withBodyInPlace { body, bigEndian in
            if let repeated = last.repeated(body, bigEndian: bigEndian) {
                properties = repeated
                return
            }
            properties = advertProperties(reusing: last) {
                DBusPropertiesChangedBody.visit(body: body, bigEndian: bigEndian, ofInterface: BlueZName.device, $0)
            }
            if properties != nil { last.remember(body, bigEndian: bigEndian) }
        }
        return properties
    }

    /// `advertProperties(of:reusing:)` of a marshalled message's bytes (for fuzzing: the hot path reads what libdbus
    /// checked, these may be anything).
    package static func advertProperties(
        marshalled bytes: UnsafeRawBufferPointer, reusing last: LastAdvertReport = LastAdvertReport()
    ) -> [BLEDeviceProperty]? {
        advertProperties(reusing: last) { DBusPropertiesChangedBody.visit(bytes, ofInterface: BlueZName.device, $0) }
    }

    private static func advertProperties(
        reusing last: LastAdvertReport,
        visiting: ((DBusPropertyName, inout DBusVariantReader) -> Bool) -> Bool
    ) -> [BLEDeviceProperty]? {
        // The list of the report before, taken out of `last` so that its storage is uniquely referenced and kept:
        // a report allocates nothing when it repeats the one before.
        last.forgetBody()
        var properties = last.takeProperties()
        properties.removeAll(keepingCapacity: true)
        properties.reserveCapacity(3)
        defer { last.properties = properties }
        let complete = visiting { name, value in
            if name.is("RSSI") {
                guard let rssi = value.int16() else { return false }
                if last.rssi == nil { last.rssi = (offset: value.offset - 2, index: properties.count) }
                properties.append(.rssi(rssi))
            } else if name.is("ServiceData") {
                guard let data = last.readServiceData(&value) else { return false }
                properties.append(.serviceData(data))
            } else if name.is("ManufacturerData") {
                guard let data = last.readManufacturerData(&value) else { return false }
                properties.append(.manufacturerData(data))
            } else if name.is("TxPower") {
                guard let power = value.int16() else { return false }
                properties.append(.txPower(power))
            } else {
                return false
            }
            return true
        }
        return complete && !properties.isEmpty ? properties : nil
    }
}

/// The path and advertised data of the last advertisement report read, so that the next report of the same device
/// repeating them (bluetoothd repeats a device's data in every report while duplicates are on) reuses their storage
/// instead of allocating it again. One device's worth: among many devices it changes with every report, which
/// costs one comparison of the path.
///
/// Used on the D-Bus connection's loop only, by the one tap that owns it.
package final class LastAdvertReport: @unchecked Sendable {
    // @unchecked: confined to the thread of the connection's loop (see above).
    var path = ""
    /// `path`'s identity in `paths` (0 when it is not kept there).
    var pathIdentity: UInt64 = 0
    /// The device paths of the reports read, each made into a String once.
    var paths = DevicePathInterner()
    /// The service and manufacturer data of the last report read: the next one of the same device hands on this
    /// same storage when it carries the same entries.
    var serviceData: AdvertisedEntries<String> = [:]
    var manufacturerData: AdvertisedEntries<UInt16> = [:]
    /// The service UUID keys of the last reports, whichever device sent them, the latest added first: among many
    /// devices the few UUIDs they advertise come again and again, and a key read again reuses its String. Reusing it
    /// spares an allocation, and a device comparing its service data's key with its last one (`UUIDTextCache`) then
    /// finds the same storage.
    package private(set) var serviceUUIDs: [String] = []
    /// The first 8 bytes of each of `serviceUUIDs` (see `serviceUUID(named:)`).
    private var serviceUUIDPrefixes: [UInt64] = []
    package static let maxServiceUUIDs = 8
    /// The properties list handed on last, whose storage the next report reuses once the handler let go of it.
    var properties: [BLEDeviceProperty] = []
    /// Where the first RSSI value of the report last read lies: its offset in the bytes read, and its index in
    /// `properties`.
    var rssi: (offset: Int, index: Int)?
    /// The body `properties` was read from in place, when it was remembered (bodies up to `maxRememberedBody`
    /// bytes, so this holds at most that much), and its byte order.
    private var body: [UInt8] = []
    private var bodyBigEndian = false
    private var bodyRemembered = false
    package static let maxRememberedBody = 2_048

    /// The bytes of body remembered now (0 when none): at most `maxRememberedBody`.
    package var rememberedBodyBytes: Int { bodyRemembered ? body.count : 0 }

    package init() {}

    /// The properties of a body that repeats the remembered one in the same byte order, byte for byte but for the
    /// RSSI's two bytes: `properties`, with the RSSI this body holds. Nil for any other body.
    func repeated(_ bytes: UnsafeRawBufferPointer, bigEndian: Bool) -> [BLEDeviceProperty]? {
        guard bodyRemembered, bigEndian == bodyBigEndian, bytes.count == body.count, let new = bytes.baseAddress
        else { return nil }
        let rssi = self.rssi
        let same = body.withUnsafeBytes { remembered in
            guard let old = remembered.baseAddress else { return false }
            guard let rssi else { return memcmp(old, new, bytes.count) == 0 }
            let after = rssi.offset + 2
            return memcmp(old, new, rssi.offset) == 0 && memcmp(old + after, new + after, bytes.count - after) == 0
        }
        guard same else { return nil }
        guard let rssi else { return properties }
        var properties = takeProperties()
        let raw = bytes.loadUnaligned(fromByteOffset: rssi.offset, as: UInt16.self)
        properties[rssi.index] = .rssi(
            Int16(bitPattern: bigEndian ? UInt16(bigEndian: raw) : UInt16(littleEndian: raw)))
        self.properties = properties
        return properties
    }

    /// Remembers the body `properties` were just read from, in place, for `repeated`.
    func remember(_ bytes: UnsafeRawBufferPointer, bigEndian: Bool) {
        guard bytes.count <= Self.maxRememberedBody else { return }
        body.replaceContents(with: bytes)
        bodyBigEndian = bigEndian
        bodyRemembered = true
    }

    /// `properties` are about to be read anew (or for another device): no body repeats them any more.
    func forgetBody() {
        bodyRemembered = false
        rssi = nil
    }

    /// The service data `value` holds, within the bounds of an advertisement (nil for anything else), kept as
    /// `serviceData`: that same storage when it holds the same entries, else new entries whose keys reuse the
    /// Strings of the last report and of `serviceUUIDs`.
    func readServiceData(_ value: inout DBusVariantReader) -> AdvertisedEntries<String>? {
        let held = serviceData
        if !held.isEmpty {
            var probe = value
            var matched = 0
            let same = probe.forEachStringKeyedByteArray(
                maxEntries: BlueZClient.maxAdvertEntries, maxBytes: BlueZClient.maxAdvertBytes,
                maxKeyLength: BlueZClient.maxServiceUUIDLength
            ) { key, bytes in
                guard held.holds(utf8: key, bytes: bytes) else { return false }
                matched += 1
                return true
            }
            if same && matched == held.count {
                value = probe
                return held
            }
        }
        var read = AdvertisedEntries<String>()
        let complete = value.forEachStringKeyedByteArray(
            maxEntries: BlueZClient.maxAdvertEntries, maxBytes: BlueZClient.maxAdvertBytes,
            maxKeyLength: BlueZClient.maxServiceUUIDLength
        ) { key, bytes in
            read.set(bytes, for: held.key(utf8: key) ?? serviceUUID(named: key))
            return true
        }
        guard complete else { return nil }
        serviceData = read
        return read
    }

    /// As `readServiceData`, for manufacturer data.
    func readManufacturerData(_ value: inout DBusVariantReader) -> AdvertisedEntries<UInt16>? {
        let held = manufacturerData
        if !held.isEmpty {
            var probe = value
            var matched = 0
            let same = probe.forEachUInt16KeyedByteArray(
                maxEntries: BlueZClient.maxAdvertEntries, maxBytes: BlueZClient.maxAdvertBytes
            ) { key, bytes in
                guard held.holds(key, bytes: bytes) else { return false }
                matched += 1
                return true
            }
            if same && matched == held.count {
                value = probe
                return held
            }
        }
        var read = AdvertisedEntries<UInt16>()
        let complete = value.forEachUInt16KeyedByteArray(
            maxEntries: BlueZClient.maxAdvertEntries, maxBytes: BlueZClient.maxAdvertBytes
        ) { key, bytes in
            read.set(bytes, for: key)
            return true
        }
        guard complete else { return nil }
        manufacturerData = read
        return read
    }

    /// The service UUID key with these UTF-8 bytes: one of `serviceUUIDs`, else made and kept there (in place of
    /// the oldest once there are `maxServiceUUIDs`).
    func serviceUUID(named bytes: UnsafeRawBufferPointer) -> String {
        // The first 8 bytes are compared before the whole text: UUID texts of one length differ there when they
        // name 16-bit UUIDs ("0000fcd2-…"), and comparing a String's UTF-8 costs some 50 instructions each.
        let prefix = Self.prefix(of: bytes)
        for index in serviceUUIDs.indices
        where serviceUUIDPrefixes[index] == prefix && serviceUUIDs[index].hasUTF8(bytes) {
            return serviceUUIDs[index]
        }
        let key = String(decoding: bytes, as: UTF8.self)
        if serviceUUIDs.count == Self.maxServiceUUIDs {
            serviceUUIDs.removeLast()
            serviceUUIDPrefixes.removeLast()
        }
        serviceUUIDs.insert(key, at: 0)
        serviceUUIDPrefixes.insert(prefix, at: 0)
        return key
    }

    /// Up to the first 8 bytes, as one word (shorter texts padded with zeros).
    private static func prefix(of bytes: UnsafeRawBufferPointer) -> UInt64 {
        guard bytes.count >= 8 else {
            var word: UInt64 = 0
            for (index, byte) in bytes.enumerated() { word |= UInt64(byte) << (8 * index) }
            return word
        }
        return bytes.loadUnaligned(as: UInt64.self)
    }

    func takeProperties() -> [BLEDeviceProperty] {
        defer { properties = [] }
        return properties
    }

    /// Starts over for another device's report.
    func forget(for path: DevicePathInterner.Interned) {
        forgetBody()
        self.path = path.path
        pathIdentity = path.identity
        serviceData = AdvertisedEntries()
        manufacturerData = AdvertisedEntries()
    }
}
