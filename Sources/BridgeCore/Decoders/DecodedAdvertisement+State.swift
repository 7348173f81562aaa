package import BluetoothCore

extension AdvertisementFacts {
    /// The facts as bluetoothd reports them: service data keyed by UUID text (unparseable keys are skipped).
    package init(
        address: BluetoothAddress, manufacturerData: AdvertisedEntries<UInt16>,
        serviceDataByUUIDText: AdvertisedEntries<String>,
        localName: String?
    ) {
        var uuids = UUIDTextCache()
        self.init(
            address: address, manufacturerData: manufacturerData, serviceDataByUUIDText: serviceDataByUUIDText,
            localName: localName, uuids: &uuids)
    }

    /// As above, reading the UUIDs through `uuids`, which a device keeps from one advertisement to the next.
    package init(
        address: BluetoothAddress, manufacturerData: AdvertisedEntries<UInt16>,
        serviceDataByUUIDText: AdvertisedEntries<String>,
        localName: String?, uuids: inout UUIDTextCache
    ) {
        // Off the hot path, which reads each report into facts a device keeps (`read`): this initialiser, as every
        // one of the type, builds the facts aside and copies them out.
        self.init(address: address)
        read(
            manufacturerData: manufacturerData, serviceDataByUUIDText: serviceDataByUUIDText, localName: localName,
            uuids: &uuids)
    }

    /// Replaces the advertised data with another advertisement's, as bluetoothd reports it, in place: the facts a
    /// device keeps are read again for each report (an initialiser builds the facts aside and copies them out whole,
    /// every array retained and released again, for every report).
    package mutating func read(
        manufacturerData: AdvertisedEntries<UInt16>, serviceDataByUUIDText: AdvertisedEntries<String>,
        localName: String?,
        uuids: inout UUIDTextCache
    ) {
        self.manufacturerData = manufacturerData
        serviceData = AdvertisedServiceData(byUUIDText: serviceDataByUUIDText, uuids: &uuids)
        self.localName = localName
    }
}

/// The UUID of the last service data key read, and its text: a sensor names the same service UUID in every
/// advertisement, so the text is compared (in the common case a pointer comparison, bluetoothd's key being kept
/// from the last report) instead of parsed again.
package struct UUIDTextCache: Sendable {
    private var text: String?
    private var parsed: BluetoothUUID?

    package init() {}

    /// The UUID `text` names; nil when it names none.
    package mutating func uuid(of text: String) -> BluetoothUUID? {
        if text == self.text { return parsed }
        let uuid = try? BluetoothUUID(parsing: text)
        self.text = text
        parsed = uuid
        return uuid
    }
}

/// The keys of a device's state document, escaped once: a sensor names the same measurements in the same order in
/// every advertisement, and writing each key from its name (quoting, scanning for escapes) cost about as much as
/// the rest of the document. Made for one decoded advertisement, used for any whose names and format it `fits`.
package struct StateDocumentLayout: Sendable {
    private let names: [String]
    private let format: AdvertisementFormat
    /// One key for each measurement, then the `format` member.
    fileprivate let fragments: JSONFragments

    package init(of decoded: DecodedAdvertisement) {
        names = decoded.measurements.map(\.name)
        format = decoded.format
        var fragments = JSONFragments.keys(names)
        fragments.append(member: { $0.field("format", decoded.format.rawValue) })
        self.fragments = fragments
    }

    /// Whether `decoded` names the same measurements, in the same order, in the same format: its document then
    /// has exactly these keys. Names a decoder gives are literals, so each comparison is one of two words.
    package func fits(_ decoded: DecodedAdvertisement) -> Bool {
        guard decoded.format == format, decoded.measurements.count == names.count else { return false }
        return decoded.measurements.withUnsafeBufferPointer { list in
            names.withUnsafeBufferPointer { names in list.indices.allSatisfy { list[$0].name == names[$0] } }
        }
    }
}

extension DecodedAdvertisement {
    /// `{"temperature":21.5,"battery":93,"format":"bthome"}`: every measurement by name (whole numbers as
    /// integers, non-finite ones as null), and the format; the `<device>/state` payload.
    package var stateJSON: [UInt8] {
        JSONWriter.document { writer in write(into: &writer, layout: nil, fits: false) }
    }

    /// Writes `stateJSON`'s bytes into `payload` in place, its keys from `layout` when it fits.
    package func writeState(into payload: inout [UInt8], layout: StateDocumentLayout?) {
        // The layout is passed on as it came, with whether it fits: a new optional holding it was a copy of its
        // three arrays, retained and released for every state written.
        let fits = layout?.fits(self) ?? false
        JSONWriter.document(into: &payload) { writer in write(into: &writer, layout: layout, fits: fits) }
    }

    private func write(into writer: inout JSONWriter, layout: StateDocumentLayout?, fits: Bool) {
        writer.beginObject()
        // Read in place: `for measurement in measurements` copied each one out (four retains and four releases of
        // its strings) for every advertisement with a new reading.
        measurements.withUnsafeBufferPointer { list in
            for index in list.indices {
                if fits {
                    writer.key(layout.unsafelyUnwrapped.fragments, at: index)
                } else {
                    writer.key(text: list[index].name)
                }
                switch list[index].value {
                case .number(let value):
                    if value == value.rounded(), abs(value) < 1e15 {
                        writer.value(Int(value))
                    } else {
                        writer.value(value)
                    }
                case .bool(let value): writer.value(value)
                case .text(let value): writer.value(value)
                }
            }
        }
        if fits {
            writer.member(layout.unsafelyUnwrapped.fragments, at: measurements.count)
        } else {
            writer.field("format", format.rawValue)
        }
        writer.endObject()
    }

    /// `temperature 21.5 °C, battery 93 %`: the measurements for people.
    package var summary: String {
        measurements.map { measurement in
            let value: String =
                switch measurement.value {
                case .number(let number) where number == number.rounded() && abs(number) < 1e15: String(Int(number))
                default: measurement.value.description
                }
            return [measurement.name, value, measurement.unit?.description].compactMap { $0 }.joined(separator: " ")
        }.joined(separator: ", ")
    }
}
