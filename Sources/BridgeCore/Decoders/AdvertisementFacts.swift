package import BluetoothCore

/// What one received advertisement says, as the passive decoders read it.
///
/// Every byte here came from the radio and is hostile: decoders check each length before reading and refuse
/// payloads longer than ``maximumPayloadLength``.
package struct AdvertisementFacts: Sendable, Equatable {
    /// The longest manufacturer or service data payload a decoder reads. An extended advertisement's data is at
    /// most 255 bytes per AD structure; anything longer did not come from one.
    package static let maximumPayloadLength = 255

    /// The advertiser's address; encrypted formats bind it into the nonce.
    package var address: BluetoothAddress
    /// Manufacturer specific data by company identifier, without the two identifier bytes.
    package var manufacturerData: AdvertisedEntries<UInt16>
    /// Service data by service UUID.
    package var serviceData: AdvertisedServiceData
    /// The complete or shortened local name, when advertised.
    package var localName: String?

    /// Creates the facts of one advertisement.
    package init(
        address: BluetoothAddress, manufacturerData: AdvertisedEntries<UInt16> = [:],
        serviceData: AdvertisedServiceData = [:], localName: String? = nil
    ) {
        self.address = address
        self.manufacturerData = manufacturerData
        self.serviceData = serviceData
        self.localName = localName
    }

    /// The service data advertised for a 16-bit assigned UUID.
    package func serviceData(uuid16: UInt16) -> [UInt8]? { serviceData[BluetoothUUID(uuid16: uuid16)] }

    /// How many bytes of service data a 16-bit assigned UUID carries (see `AdvertisedServiceData.dataCount(of:)`).
    package func serviceDataCount(uuid16: UInt16) -> Int? { serviceData.dataCount(of: BluetoothUUID(uuid16: uuid16)) }

    /// The manufacturer data of a company.
    package func manufacturerData(companyID: UInt16) -> [UInt8]? { manufacturerData.value(for: companyID) }

    /// How many bytes of manufacturer data a company carries, read in place; nil when it carries none.
    package func manufacturerDataCount(companyID: UInt16) -> Int? { manufacturerData.dataCount(of: companyID) }
}
