import BluetoothCore

/// A parsed `/set` payload.
///
/// Either the raw value in the characteristic codec's text form (`42`, `0a1b`, `open`), or a JSON envelope
/// `{"value": …, "transaction": …}`. In an envelope a string value is used as is, a number or boolean by its
/// JSON text; `transaction` (any JSON value) is echoed in the result. A JSON object without a `value` key is
/// taken as a raw payload, so a utf8 characteristic can still be sent arbitrary JSON text.
///
/// - SeeAlso: `schemas/mqtt/set.schema.json`.
package struct SetCommand: Sendable, Hashable {
    /// The value to hand to ``PayloadCodec/encode(payload:)``.
    package let value: [UInt8]
    /// Echoed in `/set/result`, when the request had one.
    package let transaction: JSONValue?

    /// Creates a command directly.
    package init(value: [UInt8], transaction: JSONValue? = nil) {
        self.value = value
        self.transaction = transaction
    }

    /// Parses a payload.
    ///
    /// - Throws: ``CodecError`` when an envelope's `value` is `null`, an array or an object.
    package init(payload: [UInt8]) throws(CodecError) {
        guard let first = payload.first(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }),
            first == UInt8(ascii: "{"), let json = try? JSONValue(parsing: payload), let value = json["value"]
        else {
            self.init(value: payload)
            return
        }
        let transaction = json["transaction"]
        switch value {
        case .string(let text): self.init(value: Array(text.utf8), transaction: transaction)
        case .number(let text): self.init(value: Array(text.utf8), transaction: transaction)
        case .bool(let flag): self.init(value: Array((flag ? "true" : "false").utf8), transaction: transaction)
        case .null, .array, .object:
            throw CodecError("\"value\" must be a string, number or boolean")
        }
    }
}

/// The `/set/result` payload: `{"ok":true}` or `{"ok":false,"error":"org.bluez.Error.…","message":"…"}`,
/// with `transaction` echoed when the request had one.
///
/// - SeeAlso: `schemas/mqtt/set-result.schema.json`.
package enum SetResult: Sendable, Hashable {
    case success
    /// `error` is a D-Bus error name, or `gattway.Error.<Kind>` for failures before BlueZ was asked.
    case failure(error: String, message: String)

    /// Serialises the result, echoing `transaction`.
    package func payload(transaction: JSONValue?) -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        switch self {
        case .success:
            writer.field("ok", true)
        case .failure(let error, let message):
            writer.field("ok", false)
            writer.field("error", error)
            writer.field("message", message)
            // BlueZ reports most peripheral refusals as Failed "Operation failed with ATT error: 0xNN": name it.
            if let att = ATTError(clientReply: BlueZErrorReply(BlueZErrorName(rawValue: error), message)) {
                writer.field("att_error", att.hexCode)
                writer.field("att_error_name", att.name)
            }
        }
        if let transaction {
            writer.key("transaction")
            transaction.write(to: &writer)
        }
        writer.endObject()
        return writer.bytes
    }
}
