/// How one BTHome v2 object's bytes read.
enum BTHomeObjectKind: Sendable {
    /// An unsigned little-endian integer of `width` bytes times `factor`.
    case unsigned(width: Int, factor: Double)
    /// A two's complement little-endian integer of `width` bytes times `factor`.
    case signed(width: Int, factor: Double)
    /// One byte, 0 or 1.
    case binary
    case packetID
    case buttonEvent
    case dimmerEvent
    /// A length byte, then UTF-8 text.
    case text
    /// A length byte, then bytes (published as hex).
    case raw
    /// A firmware version of `width` bytes, most significant byte last.
    case firmwareVersion(width: Int)
}

/// One object id of the BTHome v2 format: its name, layout and Home Assistant hints.
///
/// A class: every advertisement looks up each of its objects, and a copy of a struct of four strings took four
/// retains and, out of the optional the table returns, a destroy through generic value witnesses.
final class BTHomeObject: Sendable {
    let name: String
    let kind: BTHomeObjectKind
    let unit: LiteralText?
    let deviceClass: LiteralText?
    let stateClass: LiteralText?

    init(
        _ name: String, _ kind: BTHomeObjectKind, unit: LiteralText? = nil, deviceClass: LiteralText? = nil,
        stateClass: LiteralText? = "measurement"
    ) {
        self.name = name
        self.kind = kind
        self.unit = unit
        self.deviceClass = deviceClass
        self.stateClass = stateClass
    }

    static func binary(_ name: String, deviceClass: LiteralText?) -> BTHomeObject {
        BTHomeObject(name, .binary, deviceClass: deviceClass, stateClass: nil)
    }
}

/// Every object id of the BTHome v2 specification.
/// - SeeAlso: https://bthome.io/format/
enum BTHomeObjectTable {
    static func object(_ id: UInt8) -> BTHomeObject? { byID[Int(id)] }

    /// The table indexed by id: every advertisement looks up each of its objects, and an index is no hash.
    private static let byID: [BTHomeObject?] = (0...255).map { objects[UInt8($0)] }

    private static func u(_ width: Int, _ factor: Double = 1) -> BTHomeObjectKind {
        .unsigned(width: width, factor: factor)
    }
    private static func s(_ width: Int, _ factor: Double = 1) -> BTHomeObjectKind {
        .signed(width: width, factor: factor)
    }

    private static let objects: [UInt8: BTHomeObject] = [
        0x00: BTHomeObject("packet_id", .packetID, stateClass: nil),
        0x01: BTHomeObject("battery", u(1), unit: "%", deviceClass: "battery"),
        0x02: BTHomeObject("temperature", s(2, 0.01), unit: "°C", deviceClass: "temperature"),
        0x03: BTHomeObject("humidity", u(2, 0.01), unit: "%", deviceClass: "humidity"),
        0x04: BTHomeObject("pressure", u(3, 0.01), unit: "hPa", deviceClass: "pressure"),
        0x05: BTHomeObject("illuminance", u(3, 0.01), unit: "lx", deviceClass: "illuminance"),
        0x06: BTHomeObject("mass", u(2, 0.01), unit: "kg", deviceClass: "weight"),
        0x07: BTHomeObject("mass", u(2, 0.01), unit: "lb", deviceClass: "weight"),
        0x08: BTHomeObject("dewpoint", s(2, 0.01), unit: "°C", deviceClass: "temperature"),
        0x09: BTHomeObject("count", u(1)),
        0x0A: BTHomeObject("energy", u(3, 0.001), unit: "kWh", deviceClass: "energy", stateClass: "total_increasing"),
        0x0B: BTHomeObject("power", u(3, 0.01), unit: "W", deviceClass: "power"),
        0x0C: BTHomeObject("voltage", u(2, 0.001), unit: "V", deviceClass: "voltage"),
        0x0D: BTHomeObject("pm2_5", u(2), unit: "µg/m³", deviceClass: "pm25"),
        0x0E: BTHomeObject("pm10", u(2), unit: "µg/m³", deviceClass: "pm10"),
        0x0F: .binary("generic_boolean", deviceClass: nil),
        0x10: .binary("power_on", deviceClass: "power"),
        0x11: .binary("opening", deviceClass: "opening"),
        0x12: BTHomeObject("co2", u(2), unit: "ppm", deviceClass: "carbon_dioxide"),
        0x13: BTHomeObject("tvoc", u(2), unit: "µg/m³", deviceClass: "volatile_organic_compounds"),
        0x14: BTHomeObject("moisture", u(2, 0.01), unit: "%", deviceClass: "moisture"),
        0x15: .binary("battery_low", deviceClass: "battery"),
        0x16: .binary("battery_charging", deviceClass: "battery_charging"),
        0x17: .binary("carbon_monoxide", deviceClass: "carbon_monoxide"),
        0x18: .binary("cold", deviceClass: "cold"),
        0x19: .binary("connectivity", deviceClass: "connectivity"),
        0x1A: .binary("door", deviceClass: "door"),
        0x1B: .binary("garage_door", deviceClass: "garage_door"),
        0x1C: .binary("gas_detected", deviceClass: "gas"),
        0x1D: .binary("heat", deviceClass: "heat"),
        0x1E: .binary("light", deviceClass: "light"),
        0x1F: .binary("lock", deviceClass: "lock"),
        0x20: .binary("moisture_detected", deviceClass: "moisture"),
        0x21: .binary("motion", deviceClass: "motion"),
        0x22: .binary("moving", deviceClass: "moving"),
        0x23: .binary("occupancy", deviceClass: "occupancy"),
        0x24: .binary("plug", deviceClass: "plug"),
        0x25: .binary("presence", deviceClass: "presence"),
        0x26: .binary("problem", deviceClass: "problem"),
        0x27: .binary("running", deviceClass: "running"),
        0x28: .binary("safety", deviceClass: "safety"),
        0x29: .binary("smoke", deviceClass: "smoke"),
        0x2A: .binary("sound", deviceClass: "sound"),
        0x2B: .binary("tamper", deviceClass: "tamper"),
        0x2C: .binary("vibration", deviceClass: "vibration"),
        0x2D: .binary("window", deviceClass: "window"),
        0x2E: BTHomeObject("humidity", u(1), unit: "%", deviceClass: "humidity"),
        0x2F: BTHomeObject("moisture", u(1), unit: "%", deviceClass: "moisture"),
        0x3A: BTHomeObject("button", .buttonEvent, stateClass: nil),
        0x3C: BTHomeObject("dimmer", .dimmerEvent, stateClass: nil),
        0x3D: BTHomeObject("count", u(2)),
        0x3E: BTHomeObject("count", u(4)),
        0x3F: BTHomeObject("rotation", s(2, 0.1), unit: "°"),
        0x40: BTHomeObject("distance", u(2), unit: "mm", deviceClass: "distance"),
        0x41: BTHomeObject("distance", u(2, 0.1), unit: "m", deviceClass: "distance"),
        0x42: BTHomeObject("duration", u(3, 0.001), unit: "s", deviceClass: "duration"),
        0x43: BTHomeObject("current", u(2, 0.001), unit: "A", deviceClass: "current"),
        0x44: BTHomeObject("speed", u(2, 0.01), unit: "m/s", deviceClass: "speed"),
        0x45: BTHomeObject("temperature", s(2, 0.1), unit: "°C", deviceClass: "temperature"),
        0x46: BTHomeObject("uv_index", u(1, 0.1)),
        0x47: BTHomeObject("volume", u(2, 0.1), unit: "L", deviceClass: "volume"),
        0x48: BTHomeObject("volume", u(2), unit: "mL", deviceClass: "volume"),
        0x49: BTHomeObject("volume_flow_rate", u(2, 0.001), unit: "m³/h", deviceClass: "volume_flow_rate"),
        0x4A: BTHomeObject("voltage", u(2, 0.1), unit: "V", deviceClass: "voltage"),
        0x4B: BTHomeObject("gas", u(3, 0.001), unit: "m³", deviceClass: "gas", stateClass: "total_increasing"),
        0x4C: BTHomeObject("gas", u(4, 0.001), unit: "m³", deviceClass: "gas", stateClass: "total_increasing"),
        0x4D: BTHomeObject("energy", u(4, 0.001), unit: "kWh", deviceClass: "energy", stateClass: "total_increasing"),
        0x4E: BTHomeObject("volume", u(4, 0.001), unit: "L", deviceClass: "volume", stateClass: "total"),
        0x4F: BTHomeObject("water", u(4, 0.001), unit: "L", deviceClass: "water", stateClass: "total_increasing"),
        0x50: BTHomeObject("timestamp", u(4), unit: "s", stateClass: nil),
        0x51: BTHomeObject("acceleration", u(2, 0.001), unit: "m/s²"),
        0x52: BTHomeObject("gyroscope", u(2, 0.001), unit: "°/s"),
        0x53: BTHomeObject("text", .text, stateClass: nil),
        0x54: BTHomeObject("raw", .raw, stateClass: nil),
        0x55: BTHomeObject("volume_storage", u(4, 0.001), unit: "L", deviceClass: "volume_storage"),
        0x56: BTHomeObject("conductivity", u(2), unit: "µS/cm", deviceClass: "conductivity"),
        0x57: BTHomeObject("temperature", s(1), unit: "°C", deviceClass: "temperature"),
        0x58: BTHomeObject("temperature", s(1, 0.35), unit: "°C", deviceClass: "temperature"),
        0x59: BTHomeObject("count", s(1)),
        0x5A: BTHomeObject("count", s(2)),
        0x5B: BTHomeObject("count", s(4)),
        0x5C: BTHomeObject("power", s(4, 0.01), unit: "W", deviceClass: "power"),
        0x5D: BTHomeObject("current", s(2, 0.001), unit: "A", deviceClass: "current"),
        0x5E: BTHomeObject("direction", u(2, 0.01), unit: "°"),
        0x5F: BTHomeObject("precipitation", u(2, 0.1), unit: "mm", deviceClass: "precipitation"),
        0x60: BTHomeObject("channel", u(1)),
        0x61: BTHomeObject("rotational_speed", u(2), unit: "rpm"),
        0x62: BTHomeObject("speed", s(4, 0.000001), unit: "m/s", deviceClass: "speed"),
        0x63: BTHomeObject("acceleration", s(4, 0.000001), unit: "m/s²"),
        0x64: BTHomeObject("light_level", u(1)),
        0xF0: BTHomeObject("device_type_id", u(2), stateClass: nil),
        0xF1: BTHomeObject("firmware_version", .firmwareVersion(width: 4), stateClass: nil),
        0xF2: BTHomeObject("firmware_version", .firmwareVersion(width: 3), stateClass: nil),
    ]
}
