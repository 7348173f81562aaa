import BluetoothCore
import BridgeCore
import Testing

/// Bytes from hex text written in a test; a typo fails the test instead of trapping.
func bytes(_ hex: String, sourceLocation: SourceLocation = #_sourceLocation) -> [UInt8] {
    guard let bytes = Hex.decode(Array(hex.utf8)) else {
        Issue.record("not hex: \(hex)", sourceLocation: sourceLocation)
        return []
    }
    return bytes
}

func address(_ text: String) -> BluetoothAddress {
    BluetoothAddress(text) ?? BluetoothAddress(bytes: [0, 0, 0, 0, 0, 0])!
}

func serviceFacts(_ uuid16: UInt16, _ hex: String, address text: String = "A4:C1:38:00:00:01") -> AdvertisementFacts {
    AdvertisementFacts(address: address(text), serviceData: [BluetoothUUID(uuid16: uuid16): bytes(hex)])
}

func manufacturerFacts(_ companyID: UInt16, _ hex: String, name: String? = nil) -> AdvertisementFacts {
    AdvertisementFacts(
        address: address("A4:C1:38:00:00:01"), manufacturerData: [companyID: bytes(hex)],
        localName: name)
}

/// The decoding error's code, or nil when decoding succeeded.
func errorCode(
    _ decoder: any AdvertisementDecoder, _ facts: AdvertisementFacts, context: DecodingContext = DecodingContext()
) -> DecoderError.Code? {
    do {
        _ = try decoder.decode(facts, context: context)
        return nil
    } catch {
        return error.code
    }
}

extension DecodedAdvertisement {
    /// The numeric value of a measurement, or nil.
    func number(_ name: String) -> Double? {
        guard case .number(let value)? = measurement(named: name)?.value else { return nil }
        return value
    }

    func text(_ name: String) -> String? {
        guard case .text(let value)? = measurement(named: name)?.value else { return nil }
        return value
    }

    func bool(_ name: String) -> Bool? {
        guard case .bool(let value)? = measurement(named: name)?.value else { return nil }
        return value
    }
}
