import BluetoothCore

/// BTHome v2: service data under UUID 0xFCD2, a device information byte, then objects (id, value) in a layout
/// fixed per object id; optionally AES-CCM encrypted with the device's bindkey.
///
/// An object id this table does not know ends the packet, since its length is unknown: the values before it are
/// kept (a newer device still reports what Gattway knows), and a packet whose first object is unknown is refused.
/// When the device has a bindkey, unencrypted packets are refused, so no one can forge its values in clear.
/// - SeeAlso: https://bthome.io/format/ and https://bthome.io/encryption/
package struct BTHomeDecoder: AdvertisementDecoder {
    package static let serviceUUID16: UInt16 = 0xFCD2

    package init() {}

    package var format: AdvertisementFormat { .bthome }

    package func recognizes(_ facts: AdvertisementFacts) -> Bool {
        facts.serviceDataCount(uuid16: Self.serviceUUID16) != nil
    }

    package func decode(
        _ facts: AdvertisementFacts, context: DecodingContext
    ) throws(DecoderError) -> DecodedAdvertisement {
        let data = try facts.boundedServiceData(uuid16: Self.serviceUUID16, format: "BTHome")
        guard let deviceInformation = data.first else {
            throw DecoderError(.truncated, "BTHome: no device information byte")
        }
        let version = deviceInformation >> 5
        guard version == 2 else {
            throw DecoderError(.unsupported, "BTHome: version \(version) (only version 2 is decoded)")
        }
        let isEncrypted = deviceInformation & 0x01 != 0
        let objects: [UInt8]
        var encryptionCounter: UInt32?
        if isEncrypted {
            // device information, ciphertext, 4-byte counter, 4-byte MIC
            guard data.count >= 1 + 4 + 4 else {
                throw DecoderError(.truncated, "BTHome: encrypted payload of \(data.count) bytes lacks counter and MIC")
            }
            // Sliced where they lie, the nonce built in place: as arrays, each piece was an allocation.
            let counterBytes = data[(data.count - 8)..<(data.count - 4)]
            var nonce = AESCCMNonce()
            for index in 0..<BluetoothAddress.byteCount { nonce.append(facts.address.byte(index)) }
            nonce.append(0xD2)
            nonce.append(0xFC)
            nonce.append(deviceInformation)
            nonce.append(contentsOf: counterBytes)
            objects = try context.open(
                ciphertext: data[1..<(data.count - 8)], nonce: nonce, tag: data[(data.count - 4)...],
                additionalData: [], format: "BTHome")
            encryptionCounter = LittleEndian.unsigned(counterBytes)
        } else {
            // With a bindkey only authenticated values count; a plain packet would let anyone set them.
            guard context.bindkey == nil else {
                throw DecoderError(.notEncrypted, "BTHome: the device has a bindkey but this packet is not encrypted")
            }
            objects = Array(data.dropFirst())
        }
        let result = try Self.decodeObjects(objects)
        return DecodedAdvertisement(
            format: .bthome, measurements: result.measurements, packetID: result.packetID,
            encryptionCounter: encryptionCounter)
    }

    private struct Objects {
        var measurements: [DecodedMeasurement] = []
        var packetID: UInt32?
    }

    private static func decodeObjects(_ bytes: [UInt8]) throws(DecoderError) -> Objects {
        var reader = ByteReader(bytes, context: "BTHome")
        var result = Objects()
        // Every object takes two bytes at least, and a dimmer's (three bytes) yields two measurements: room for
        // them all at once, where appending grew the array at the first, second and fifth.
        result.measurements.reserveCapacity(bytes.count / 2 + 1)
        var namer = MeasurementNamer()
        var decodedAny = false
        while !reader.isAtEnd {
            let id = try reader.uint8("object id")
            guard let object = BTHomeObjectTable.object(id) else {
                if decodedAny { break }
                throw DecoderError(.unsupported, "BTHome: unknown object id 0x\(String(id, radix: 16))")
            }
            decodedAny = true
            let values = try read(object, id: id, from: &reader)
            if case .packetID = object.kind, case .number(let number) = values.value {
                result.packetID = UInt32(number)
                continue
            }
            result.measurements.append(
                DecodedMeasurement(
                    name: namer.name(object.name), value: values.value, unit: object.unit,
                    deviceClass: object.deviceClass, stateClass: object.stateClass))
            if let steps = values.steps {
                result.measurements.append(
                    DecodedMeasurement(
                        name: namer.name("\(object.name)_steps"), value: .number(steps), unit: nil, deviceClass: nil,
                        stateClass: nil))
            }
        }
        return result
    }

    /// What one object holds: its value, and for a dimmer event also its step count.
    private struct ObjectValues {
        let value: MeasurementValue
        var steps: Double?
    }

    /// The values of one object; a dimmer event yields its direction and its step count.
    private static func read(
        _ object: BTHomeObject, id: UInt8, from reader: inout ByteReader
    ) throws(DecoderError) -> ObjectValues {
        let field = object.name
        switch object.kind {
        case .unsigned(let width, let factor):
            return ObjectValues(value: .number(scaled(Double(try reader.uintLE(width, field)), by: factor)))
        case .signed(let width, let factor):
            return ObjectValues(value: .number(scaled(Double(try reader.intLE(width, field)), by: factor)))
        case .packetID:
            return ObjectValues(value: .number(Double(try reader.uint8(field))))
        case .binary:
            let raw = try reader.uint8(field)
            guard raw <= 1 else {
                throw DecoderError(.malformed, "BTHome: \(field) is \(raw), not 0 or 1")
            }
            return ObjectValues(value: .bool(raw == 1))
        case .buttonEvent:
            let raw = try reader.uint8(field)
            guard let event = buttonEvents[raw] else {
                throw DecoderError(.malformed, "BTHome: button event 0x\(String(raw, radix: 16)) is not defined")
            }
            return ObjectValues(value: .text(event))
        case .dimmerEvent:
            let raw = try reader.uint8(field)
            let steps = try reader.uint8("dimmer steps")
            guard let event = dimmerEvents[raw] else {
                throw DecoderError(.malformed, "BTHome: dimmer event 0x\(String(raw, radix: 16)) is not defined")
            }
            return ObjectValues(value: .text(event), steps: Double(steps))
        case .text:
            let length = Int(try reader.uint8("text length"))
            let bytes = try reader.bytes(length, for: field)
            return ObjectValues(value: .text(String(decoding: bytes, as: UTF8.self)))
        case .raw:
            let length = Int(try reader.uint8("raw length"))
            return ObjectValues(value: .text(Hex.string(try reader.bytes(length, for: field))))
        case .firmwareVersion(let width):
            let bytes = try reader.bytes(width, for: field)
            return ObjectValues(value: .text(bytes.reversed().map { String($0) }.joined(separator: ".")))
        }
    }

    private static let buttonEvents: [UInt8: String] = [
        0x00: "none", 0x01: "press", 0x02: "double_press", 0x03: "triple_press", 0x04: "long_press",
        0x05: "long_double_press", 0x06: "long_triple_press", 0x80: "hold_press",
    ]

    private static let dimmerEvents: [UInt8: String] = [0x00: "none", 0x01: "rotate_left", 0x02: "rotate_right"]
}
