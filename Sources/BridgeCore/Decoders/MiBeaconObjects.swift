/// The MiBeacon object types Gattway reads (sensors of the common thermometers, plant sensors, motion, door and
/// button devices), by the length and scale the Xiaomi object definitions give them.
enum MiBeaconObjects {
    /// What one object holds: none, one or two measurements, in place (as an array, every object was an allocation).
    enum Measurements {
        case none
        case one(DecodedMeasurement)
        case two(DecodedMeasurement, DecodedMeasurement)
    }

    /// The measurements of an object of `type` whose value is `value` (a slice of the packet, read where it lies).
    static func measurements(type: UInt16, value: ArraySlice<UInt8>) throws(DecoderError) -> Measurements {
        func byte(_ index: Int) -> UInt8 { value[value.startIndex + index] }
        func require(_ length: Int) throws(DecoderError) {
            guard value.count == length else {
                throw DecoderError(
                    .malformed, "MiBeacon: object 0x\(String(type, radix: 16)) has \(value.count) bytes, not \(length)")
            }
        }
        var reader = ByteReader(value, context: "MiBeacon object")
        switch type {
        case 0x1004:
            try require(2)
            return .one(temperature(Double(try reader.intLE(2, "temperature")), factor: 0.1))
        case 0x1006:
            try require(2)
            return .one(humidity(Double(try reader.uintLE(2, "humidity")), factor: 0.1))
        case 0x100D:
            try require(4)
            let temperature = Double(try reader.intLE(2, "temperature"))
            let humidity = Double(try reader.uintLE(2, "humidity"))
            return .two(Self.temperature(temperature, factor: 0.1), Self.humidity(humidity, factor: 0.1))
        case 0x100A, 0x4803:
            try require(1)
            return .one(
                DecodedMeasurement(
                    name: "battery", value: .number(Double(byte(0))), unit: "%",
                    deviceClass: "battery", stateClass: "measurement")
            )
        case 0x1007:
            try require(3)
            return .one(illuminance(Double(try reader.uintLE(3, "illuminance"))))
        case 0x000F:
            try require(3)
            return .two(
                DecodedMeasurement(name: "motion", value: .bool(true), deviceClass: "motion"),
                illuminance(Double(try reader.uintLE(3, "illuminance")))
            )
        case 0x1008:
            try require(1)
            return .one(
                DecodedMeasurement(
                    name: "moisture", value: .number(Double(byte(0))), unit: "%",
                    deviceClass: "moisture", stateClass: "measurement")
            )
        case 0x1009:
            try require(2)
            return .one(
                DecodedMeasurement(
                    name: "conductivity", value: .number(Double(try reader.uintLE(2, "conductivity"))),
                    unit: "µS/cm", deviceClass: "conductivity", stateClass: "measurement")
            )
        case 0x1010:
            try require(2)
            return .one(
                DecodedMeasurement(
                    name: "formaldehyde",
                    value: .number(scaled(Double(try reader.uintLE(2, "formaldehyde")), by: 0.01)),
                    unit: "mg/m³", stateClass: "measurement")
            )
        case 0x1012:
            try require(1)
            return .one(DecodedMeasurement(name: "power_on", value: .bool(byte(0) != 0), deviceClass: "power"))
        case 0x1013:
            try require(1)
            return .one(
                DecodedMeasurement(
                    name: "consumable", value: .number(Double(byte(0))), unit: "%",
                    stateClass: "measurement")
            )
        case 0x1014:
            try require(1)
            return .one(
                DecodedMeasurement(name: "moisture_detected", value: .bool(byte(0) != 0), deviceClass: "moisture"))
        case 0x1015:
            try require(1)
            return .one(DecodedMeasurement(name: "smoke", value: .bool(byte(0) != 0), deviceClass: "smoke"))
        case 0x1017:
            try require(4)
            return .one(
                DecodedMeasurement(
                    name: "no_motion_time", value: .number(Double(try reader.uintLE(4, "time"))),
                    unit: "s", deviceClass: "duration", stateClass: "measurement")
            )
        case 0x1018:
            try require(1)
            return .one(DecodedMeasurement(name: "light", value: .bool(byte(0) != 0), deviceClass: "light"))
        case 0x1019:
            try require(1)
            // 0 open, 1 closed, 2 left open too long, 3 device reset
            guard byte(0) <= 2 else { return .none }
            return .one(DecodedMeasurement(name: "opening", value: .bool(byte(0) != 1), deviceClass: "opening"))
        case 0x1001:
            // button index, a value, press type; press types above 2 mean different things per device model
            try require(3)
            let press = byte(2)
            let event =
                press == 0 ? "press" : press == 1 ? "double_press" : press == 2 ? "long_press" : "event_\(press)"
            return .two(
                DecodedMeasurement(name: "button", value: .text(event)),
                DecodedMeasurement(name: "button_id", value: .number(Double(byte(0))))
            )
        case 0x4C01:
            try require(4)
            return .one(
                temperature(try finite(Float(bitPattern: try reader.uintLE(4, "temperature"))), factor: 1, round: 0.01)
            )
        case 0x4C02:
            try require(1)
            return .one(humidity(Double(byte(0)), factor: 1))
        case 0x4C08:
            try require(4)
            return .one(
                humidity(try finite(Float(bitPattern: try reader.uintLE(4, "humidity"))), factor: 1, round: 0.01))
        default:
            return .none
        }
    }

    private static func finite(_ value: Float) throws(DecoderError) -> Double {
        guard value.isFinite, abs(value) < 1e9 else {
            throw DecoderError(.malformed, "MiBeacon: float object is \(value)")
        }
        return Double(value)
    }

    private static func temperature(_ raw: Double, factor: Double, round: Double? = nil) -> DecodedMeasurement {
        DecodedMeasurement(
            name: "temperature", value: .number(reading(raw, by: factor, to: round)),
            unit: "°C", deviceClass: "temperature", stateClass: "measurement")
    }

    private static func humidity(_ raw: Double, factor: Double, round: Double? = nil) -> DecodedMeasurement {
        DecodedMeasurement(
            name: "humidity", value: .number(reading(raw, by: factor, to: round)),
            unit: "%", deviceClass: "humidity", stateClass: "measurement")
    }

    private static func illuminance(_ raw: Double) -> DecodedMeasurement {
        DecodedMeasurement(
            name: "illuminance", value: .number(raw), unit: "lx", deviceClass: "illuminance",
            stateClass: "measurement")
    }

    /// A float value rounded to `step` (the sensor's resolution), or a scaled integer.
    private static func reading(_ raw: Double, by factor: Double, to step: Double?) -> Double {
        guard let step else { return scaled(raw, by: factor) }
        return scaled((raw / step).rounded(), by: step)
    }
}
