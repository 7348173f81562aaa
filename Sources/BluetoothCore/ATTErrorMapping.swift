/// The GATT operation an error belongs to; `NotPermitted` maps to a different ATT code for each.
package enum GATTOperation: Sendable, Hashable {
    case read
    case write
}

extension ATTError {
    /// The ATT error bluetoothd sends to a remote central when a local GATT application answers a
    /// `ReadValue`/`WriteValue` call with a D-Bus error (server side).
    ///
    /// Follows bluetoothd's `gatt-database.c`: `Failed` with a message `0x80`…`0x9f` sends that application
    /// error (other text → 0x80); `NotSupported` → 0x06; `NotAuthorized` → 0x08; `InvalidValueLength` → 0x0D;
    /// `InvalidOffset` → 0x07; `InProgress` → 0xFE; `ImproperlyConfigured` → 0xFD; `NotPermitted` → 0x02 for a
    /// read, 0x03 for a write; anything else → 0x0E.
    package static func sentToRemote(
        forApplicationError name: BlueZErrorName,
        message: String,
        during operation: GATTOperation
    ) -> ATTError {
        switch name {
        case .failed: applicationCode(in: message) ?? ATTError(code: 0x80)
        case .notSupported: .requestNotSupported
        case .notAuthorized: .insufficientAuthorization
        case .invalidValueLength: .invalidAttributeValueLength
        case .invalidOffset: .invalidOffset
        case .inProgress: .procedureAlreadyInProgress
        case .improperlyConfigured: .cccdImproperlyConfigured
        case .notPermitted: operation == .read ? .readNotPermitted : .writeNotPermitted
        default: .unlikelyError
        }
    }

    /// Parses `0x80`…`0x9f` (any case, surrounding whitespace allowed) from a `Failed` message.
    private static func applicationCode(in message: String) -> ATTError? {
        var utf8 = Substring(message).utf8.drop(while: { $0 == 0x20 })
        while let last = utf8.last, last == 0x20 { utf8 = utf8.dropLast() }
        let bytes = Array(utf8)
        guard bytes.count == 4, bytes[0] == UInt8(ascii: "0"), bytes[1] | 0x20 == UInt8(ascii: "x"),
            let high = Hex.value(of: bytes[2]), let low = Hex.value(of: bytes[3])
        else { return nil }
        let error = ATTError(code: high << 4 | low)
        return error.isApplicationError ? error : nil
    }

    /// The D-Bus error bluetoothd returns to a local client when the remote answers a read or write with this
    /// ATT error (client side).
    ///
    /// Follows bluetoothd's `gatt-client.c`: Read/Write Not Permitted → `NotPermitted`; Insufficient
    /// Authentication/Encryption/Key Size → `NotPermitted "Not paired"`; Invalid Offset → `InvalidArguments
    /// "Invalid offset"`; Invalid Attribute Value Length → `InvalidArguments "Invalid Length"`; Insufficient
    /// Authorization → `NotAuthorized`; Request Not Supported → `NotSupported`; any other code →
    /// `Failed "Operation failed with ATT error: 0xNN"`.
    package var replyToClient: BlueZErrorReply {
        switch self {
        case .readNotPermitted: BlueZErrorReply(.notPermitted, "Read not permitted")
        case .writeNotPermitted: BlueZErrorReply(.notPermitted, "Write not permitted")
        case .insufficientAuthentication, .insufficientEncryption, .insufficientEncryptionKeySize:
            BlueZErrorReply(.notPermitted, "Not paired")
        case .invalidOffset: BlueZErrorReply(.invalidArguments, "Invalid offset")
        case .invalidAttributeValueLength: BlueZErrorReply(.invalidArguments, "Invalid Length")
        case .insufficientAuthorization: BlueZErrorReply(.notAuthorized, "Operation Not Authorized")
        case .requestNotSupported: BlueZErrorReply(.notSupported, "Operation is not supported")
        default: BlueZErrorReply(.failed, "Operation failed with ATT error: \(hexCode)")
        }
    }

    /// Recovers the ATT code from a client-side `Failed "Operation failed with ATT error: 0xNN"` reply,
    /// so that results published to MQTT can name it. Nil for any other reply.
    package init?(clientReply reply: BlueZErrorReply) {
        let marker = "ATT error: 0x"
        guard reply.name == .failed, reply.message.hasPrefix("Operation failed with "),
            reply.message.utf8.count >= marker.utf8.count + 2
        else { return nil }
        let tail = Array(reply.message.utf8.suffix(2))
        guard reply.message.utf8.dropLast(2).elementsEqual(("Operation failed with " + marker).utf8),
            let high = Hex.value(of: tail[0]), let low = Hex.value(of: tail[1])
        else { return nil }
        self.init(code: high << 4 | low)
    }
}
