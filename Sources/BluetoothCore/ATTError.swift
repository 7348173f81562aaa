/// An Attribute Protocol error code, as carried in an ATT Error Response.
///
/// - SeeAlso: Bluetooth Core Specification, Vol 3, Part F, §3.4.1.1 (codes 0x01–0x13, application errors
///   0x80–0x9F) and Core Specification Supplement, Part B (common profile errors 0xFC–0xFF).
package struct ATTError: Hashable, Sendable, CustomStringConvertible {
    /// The one-byte code.
    package let code: UInt8

    /// Wraps any code; unassigned values keep their number and are named "Reserved".
    package init(code: UInt8) {
        self.code = code
    }

    package static let invalidHandle = ATTError(code: 0x01)
    package static let readNotPermitted = ATTError(code: 0x02)
    package static let writeNotPermitted = ATTError(code: 0x03)
    package static let invalidPDU = ATTError(code: 0x04)
    package static let insufficientAuthentication = ATTError(code: 0x05)
    package static let requestNotSupported = ATTError(code: 0x06)
    package static let invalidOffset = ATTError(code: 0x07)
    package static let insufficientAuthorization = ATTError(code: 0x08)
    package static let prepareQueueFull = ATTError(code: 0x09)
    package static let attributeNotFound = ATTError(code: 0x0A)
    package static let attributeNotLong = ATTError(code: 0x0B)
    package static let insufficientEncryptionKeySize = ATTError(code: 0x0C)
    package static let invalidAttributeValueLength = ATTError(code: 0x0D)
    // swift-format-ignore: DontRepeatTypeInStaticProperties
    // "Unlikely Error" is the name the Core Specification (Vol 3, Part F, 3.4.1.1) gives this code.
    package static let unlikelyError = ATTError(code: 0x0E)
    package static let insufficientEncryption = ATTError(code: 0x0F)
    package static let unsupportedGroupType = ATTError(code: 0x10)
    package static let insufficientResources = ATTError(code: 0x11)
    package static let databaseOutOfSync = ATTError(code: 0x12)
    package static let valueNotAllowed = ATTError(code: 0x13)
    package static let writeRequestRejected = ATTError(code: 0xFC)
    package static let cccdImproperlyConfigured = ATTError(code: 0xFD)
    package static let procedureAlreadyInProgress = ATTError(code: 0xFE)
    package static let outOfRange = ATTError(code: 0xFF)

    /// An application error (0x80–0x9F), or nil when `offset` is outside 0...0x1F.
    package static func application(_ offset: UInt8) -> ATTError? {
        offset <= 0x1F ? ATTError(code: 0x80 + offset) : nil
    }

    /// True for 0x80–0x9F, the range a GATT server application defines for itself.
    package var isApplicationError: Bool { (0x80...0x9F).contains(code) }

    /// True for 0xE0–0xFF, the common profile and service error codes.
    package var isCommonProfileError: Bool { code >= 0xE0 }

    /// The specification's name for the code.
    package var name: String {
        switch code {
        case 0x01: "Invalid Handle"
        case 0x02: "Read Not Permitted"
        case 0x03: "Write Not Permitted"
        case 0x04: "Invalid PDU"
        case 0x05: "Insufficient Authentication"
        case 0x06: "Request Not Supported"
        case 0x07: "Invalid Offset"
        case 0x08: "Insufficient Authorization"
        case 0x09: "Prepare Queue Full"
        case 0x0A: "Attribute Not Found"
        case 0x0B: "Attribute Not Long"
        case 0x0C: "Insufficient Encryption Key Size"
        case 0x0D: "Invalid Attribute Value Length"
        case 0x0E: "Unlikely Error"
        case 0x0F: "Insufficient Encryption"
        case 0x10: "Unsupported Group Type"
        case 0x11: "Insufficient Resources"
        case 0x12: "Database Out Of Sync"
        case 0x13: "Value Not Allowed"
        case 0x80...0x9F: "Application Error"
        case 0xFC: "Write Request Rejected"
        case 0xFD: "Client Characteristic Configuration Descriptor Improperly Configured"
        case 0xFE: "Procedure Already in Progress"
        case 0xFF: "Out of Range"
        case 0xE0...0xFB: "Common Profile Error"
        default: "Reserved"
        }
    }

    /// The code as `0xNN`, upper-case, as BlueZ prints it.
    package var hexCode: String {
        String(
            decoding: [
                UInt8(ascii: "0"), UInt8(ascii: "x"), Hex.digit(code >> 4, uppercase: true),
                Hex.digit(code, uppercase: true),
            ],
            as: UTF8.self)
    }

    /// `0x0E Unlikely Error`.
    package var description: String { "\(hexCode) \(name)" }
}
