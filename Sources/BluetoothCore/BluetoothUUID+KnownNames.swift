extension BluetoothUUID {
    /// The Bluetooth SIG's name for the services, characteristics and descriptors Gattway meets in its codecs,
    /// its simulator scenarios and every GATT database (GAP, GATT, CCCD); nil for any other UUID.
    ///
    /// - SeeAlso: Bluetooth Assigned Numbers, §3.4 (services), §3.8 (characteristics), §3.7 (descriptors).
    package var knownName: String? {
        guard let short = uuid16 else { return nil }
        return Self.knownNames[short]
    }

    private static let knownNames: [UInt16: String] = [
        0x1800: "Generic Access",
        0x1801: "Generic Attribute",
        0x180A: "Device Information",
        0x180D: "Heart Rate",
        0x180F: "Battery",
        0x181A: "Environmental Sensing",
        0x2900: "Characteristic Extended Properties",
        0x2901: "Characteristic User Description",
        0x2902: "Client Characteristic Configuration",
        0x2903: "Server Characteristic Configuration",
        0x2904: "Characteristic Presentation Format",
        0x2A00: "Device Name",
        0x2A01: "Appearance",
        0x2A05: "Service Changed",
        0x2A19: "Battery Level",
        0x2A24: "Model Number String",
        0x2A25: "Serial Number String",
        0x2A26: "Firmware Revision String",
        0x2A27: "Hardware Revision String",
        0x2A28: "Software Revision String",
        0x2A29: "Manufacturer Name String",
        0x2A37: "Heart Rate Measurement",
        0x2A38: "Body Sensor Location",
        0x2A39: "Heart Rate Control Point",
        0x2A6E: "Temperature",
        0x2A6F: "Humidity",
    ]
}
