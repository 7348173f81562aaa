/// A `/set` (or `/get`) payload: either the value itself in the characteristic codec's text form, or the JSON
/// envelope `{"value": …, "transaction": …}` (schemas/mqtt/set-request.schema.json).
///
/// A JSON string value is unwrapped (`{"value":"lock"}` writes `lock` through the codec); any other JSON value is
/// passed to the codec as its JSON text (`{"value":21.5}` → `21.5`). A payload that is not such an envelope is the
/// value itself, byte for byte.
package struct SetPayload: Sendable, Equatable {
    package var value: [UInt8]
    package var transaction: JSONValue?

    package init(parsing payload: [UInt8]) {
        guard payload.first == UInt8(ascii: "{"), let json = try? JSONValue(parsing: payload), json.isObject,
            json["value"] != nil || json["transaction"] != nil
        else {
            value = payload
            transaction = nil
            return
        }
        transaction = json["transaction"]
        switch json["value"] {
        case .string(let text)?: value = Array(text.utf8)
        case let other?: value = other.serialized
        case nil: value = []
        }
    }
}
