import BluetoothCore

/// Xiaomi MiBeacon versions 2 to 5: service data under UUID 0xFE95. A frame control word says which optional
/// fields follow (MAC, capability, objects) and whether the objects are encrypted; objects are type-length-value.
///
/// Encrypted v4/v5 packets are opened with the bindkey (AES-CCM, nonce = MAC + product id + frame counter + 3-byte
/// extended counter, additional data 0x11, 4-byte MIC). The legacy cipher of encrypted v2/v3 packets and mesh
/// packets are refused as unsupported, and so are plain objects from a device that has a bindkey. Object types not in ``MiBeaconObjects`` are skipped by their length.
package struct MiBeaconDecoder: AdvertisementDecoder {
    package static let serviceUUID16: UInt16 = 0xFE95
    /// The additional authenticated data of an encrypted packet.
    private static let additionalData: [UInt8] = [0x11]

    package init() {}

    package var format: AdvertisementFormat { .mibeacon }

    package func recognizes(_ facts: AdvertisementFacts) -> Bool {
        facts.serviceDataCount(uuid16: Self.serviceUUID16) != nil
    }

    package func decode(
        _ facts: AdvertisementFacts, context: DecodingContext
    ) throws(DecoderError) -> DecodedAdvertisement {
        let data = try facts.boundedServiceData(uuid16: Self.serviceUUID16, format: "MiBeacon")
        var reader = ByteReader(data, context: "MiBeacon")
        let frameControl = UInt16(try reader.uintLE(2, "frame control"))
        let productID = try reader.slice(2, for: "product id")
        let frameCounter = try reader.uint8("frame counter")
        let version = frameControl >> 12
        guard (2...5).contains(version) else {
            throw DecoderError(.unsupported, "MiBeacon: version \(version) (versions 2 to 5 are decoded)")
        }
        guard frameControl & 0x0080 == 0 else { throw DecoderError(.unsupported, "MiBeacon: mesh packet") }
        if frameControl & 0x0010 != 0 {
            let mac = try reader.slice(6, for: "MAC")
            // Least significant byte first in the payload.
            guard mac.indices.allSatisfy({ mac[$0] == facts.address.byte(mac.endIndex - 1 - $0) }) else {
                throw DecoderError(.malformed, "MiBeacon: MAC in the payload is not the advertiser's address")
            }
        }
        if frameControl & 0x0020 != 0 {
            let capability = try reader.uint8("capability")
            if capability & 0x20 != 0 { try reader.skip(2, "I/O capability") }
        }
        guard frameControl & 0x0040 != 0 else {
            return DecodedAdvertisement(format: .mibeacon, measurements: [], packetID: UInt32(frameCounter))
        }
        let rest = try reader.slice(reader.remaining, for: "objects")
        guard frameControl & 0x0008 != 0 else {
            // With a bindkey only authenticated values count; a plain packet would let anyone set them.
            guard context.bindkey == nil else {
                throw DecoderError(
                    .notEncrypted, "MiBeacon: the device has a bindkey but these objects are not encrypted")
            }
            return DecodedAdvertisement(
                format: .mibeacon, measurements: try Self.decodeObjects(Array(rest)),
                packetID: UInt32(frameCounter))
        }
        guard version >= 4 else {
            throw DecoderError(.unsupported, "MiBeacon: legacy encryption of version \(version)")
        }
        // ciphertext, 3-byte extended counter, 4-byte MIC
        guard rest.count >= 3 + 4 else {
            throw DecoderError(.truncated, "MiBeacon: encrypted objects of \(rest.count) bytes lack counter and MIC")
        }
        // Sliced where they lie (a slice keeps its base's indices).
        let extendedCounter = rest[(rest.endIndex - 7)..<(rest.endIndex - 4)]
        var nonce = AESCCMNonce()
        for index in (0..<BluetoothAddress.byteCount).reversed() { nonce.append(facts.address.byte(index)) }
        nonce.append(contentsOf: productID)
        nonce.append(frameCounter)
        nonce.append(contentsOf: extendedCounter)
        let objects = try context.open(
            ciphertext: rest[..<(rest.endIndex - 7)], nonce: nonce, tag: rest[(rest.endIndex - 4)...],
            additionalData: Self.additionalData[...], format: "MiBeacon")
        let counter = UInt32(frameCounter) | LittleEndian.unsigned(extendedCounter) << 8
        return DecodedAdvertisement(
            format: .mibeacon, measurements: try Self.decodeObjects(objects),
            packetID: UInt32(frameCounter), encryptionCounter: counter)
    }

    private static func decodeObjects(_ bytes: [UInt8]) throws(DecoderError) -> [DecodedMeasurement] {
        var reader = ByteReader(bytes, context: "MiBeacon")
        var measurements: [DecodedMeasurement] = []
        // An object takes three bytes at least and yields at most two measurements.
        measurements.reserveCapacity(bytes.count / 3 * 2 + 1)
        var namer = MeasurementNamer()
        while !reader.isAtEnd {
            let type = UInt16(try reader.uintLE(2, "object type"))
            let length = Int(try reader.uint8("object length"))
            let value = try reader.slice(length, for: "object 0x\(String(type, radix: 16))")
            switch try MiBeaconObjects.measurements(type: type, value: value) {
            case .none:
                break
            case .one(let measurement):
                Self.append(measurement, to: &measurements, namer: &namer)
            case .two(let first, let second):
                Self.append(first, to: &measurements, namer: &namer)
                Self.append(second, to: &measurements, namer: &namer)
            }
        }
        return measurements
    }

    private static func append(
        _ measurement: DecodedMeasurement, to measurements: inout [DecodedMeasurement], namer: inout MeasurementNamer
    ) {
        var measurement = measurement
        measurement.name = namer.name(measurement.name)
        measurements.append(measurement)
    }
}
