/// What the local peripheral advertises; optional parts are left out of the advertisement when nil or empty
/// (BlueZ treats absent and empty differently for some of them).
package struct GATTAdvertisement: Sendable {
    package var localName: String?
    package var serviceUUIDs: [String]
    package var manufacturerData: (companyID: UInt16, data: [UInt8])?
    package var serviceData: (uuid: String, data: [UInt8])?
    package var discoverable: Bool
    /// `tx-power`, `appearance`, `local-name`.
    package var includes: [String]
    package var appearance: UInt16?

    package init(
        localName: String?, serviceUUIDs: [String], manufacturerData: (companyID: UInt16, data: [UInt8])?,
        serviceData: (uuid: String, data: [UInt8])?, discoverable: Bool, includes: [String], appearance: UInt16?
    ) {
        self.localName = localName
        self.serviceUUIDs = serviceUUIDs
        self.manufacturerData = manufacturerData
        self.serviceData = serviceData
        self.discoverable = discoverable
        self.includes = includes
        self.appearance = appearance
    }
}
