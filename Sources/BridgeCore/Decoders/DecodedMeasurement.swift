/// A measured value as a decoder found it: a number, a state or a text (events and identifiers).
package enum MeasurementValue: Sendable, Equatable, CustomStringConvertible {
    case number(Double)
    case bool(Bool)
    case text(String)

    package var description: String {
        switch self {
        case .number(let value): "\(value)"
        case .bool(let value): "\(value)"
        case .text(let value): value
        }
    }
}

/// One value decoded from an advertisement, with what a Home Assistant discovery step needs to announce it.
package struct DecodedMeasurement: Sendable, Equatable {
    /// The measurement's key in the device's state, such as `temperature` or `temperature_2` when a packet
    /// carries a second temperature.
    package var name: String
    package var value: MeasurementValue
    /// The unit as Home Assistant spells it (`°C`, `%`, `hPa`, `V`), or nil for unitless values.
    package var unit: LiteralText?
    /// A suggested Home Assistant `device_class` (`temperature`, `battery`, `motion`), or nil.
    package var deviceClass: LiteralText?
    /// A suggested Home Assistant `state_class` (`measurement`, `total_increasing`), or nil for states and events.
    package var stateClass: LiteralText?

    /// Creates a measurement.
    package init(
        name: String, value: MeasurementValue, unit: LiteralText? = nil, deviceClass: LiteralText? = nil,
        stateClass: LiteralText? = nil
    ) {
        self.name = name
        self.value = value
        self.unit = unit
        self.deviceClass = deviceClass
        self.stateClass = stateClass
    }

}

/// What a decoder made of one advertisement.
package struct DecodedAdvertisement: Sendable, Equatable {
    /// The format that decoded it.
    package var format: AdvertisementFormat
    /// The values in the order the advertisement carried them.
    package var measurements: [DecodedMeasurement]
    /// The format's packet id or frame counter, for telling a repeat from a new reading; nil where the format or
    /// this packet has none.
    package var packetID: UInt32?
    /// The counter an encrypted packet was sealed with; a receiver refuses one that does not increase (replay).
    package var encryptionCounter: UInt32?

    /// Creates a decoding result.
    package init(
        format: AdvertisementFormat, measurements: [DecodedMeasurement], packetID: UInt32? = nil,
        encryptionCounter: UInt32? = nil
    ) {
        self.format = format
        self.measurements = measurements
        self.packetID = packetID
        self.encryptionCounter = encryptionCounter
    }

    /// The first measurement with this name.
    package func measurement(named name: String) -> DecodedMeasurement? {
        measurements.first { $0.name == name }
    }

    /// Whether `other` carries the same format and kinds of measurement (names, units and classes), whatever their
    /// values: Home Assistant discovery needs to hear of a change of kinds only.
    ///
    /// Here, beside the type: from another module the comparison copied each measurement out of its list and ran
    /// `==` of the optional texts unspecialized, through the protocol's witness table.
    package func hasSameKinds(as other: DecodedAdvertisement?) -> Bool {
        guard let other, format == other.format, measurements.count == other.measurements.count else { return false }
        // Through buffers, field by field: `measurements[index]` copied the measurement out (retaining its texts).
        return measurements.withUnsafeBufferPointer { mine in
            other.measurements.withUnsafeBufferPointer { theirs in
                mine.indices.allSatisfy { index in
                    mine[index].name == theirs[index].name && mine[index].unit == theirs[index].unit
                        && mine[index].deviceClass == theirs[index].deviceClass
                        && mine[index].stateClass == theirs[index].stateClass
                }
            }
        }
    }
}
