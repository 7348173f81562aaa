/// A characteristic or descriptor flag string as BlueZ uses it in `GattCharacteristic1.Flags` and
/// `GattDescriptor1.Flags`.
///
/// The security variants imply their base property plus a permission: `encrypt-read` is a readable
/// characteristic that needs an encrypted link, and so on.
///
/// - SeeAlso: BlueZ `doc/org.bluez.GattCharacteristic.rst`.
package enum GATTCharacteristicFlag: String, Sendable, Hashable, CaseIterable {
    case broadcast
    case read
    case write
    case writeWithoutResponse = "write-without-response"
    case notify
    case indicate
    case authenticatedSignedWrites = "authenticated-signed-writes"
    case extendedProperties = "extended-properties"
    case reliableWrite = "reliable-write"
    case writableAuxiliaries = "writable-auxiliaries"
    case encryptRead = "encrypt-read"
    case encryptWrite = "encrypt-write"
    case encryptNotify = "encrypt-notify"
    case encryptIndicate = "encrypt-indicate"
    case encryptAuthenticatedRead = "encrypt-authenticated-read"
    case encryptAuthenticatedWrite = "encrypt-authenticated-write"
    case encryptAuthenticatedNotify = "encrypt-authenticated-notify"
    case encryptAuthenticatedIndicate = "encrypt-authenticated-indicate"
    case secureRead = "secure-read"
    case secureWrite = "secure-write"
    case secureNotify = "secure-notify"
    case secureIndicate = "secure-indicate"
    case authorize

    /// The base property a flag grants: itself for plain properties, `read` for `encrypt-read`, and so on.
    /// Nil for flags that grant no data-flow property (`broadcast`, `authorize`, `extended-properties`, ...).
    package var impliedProperty: GATTCharacteristicFlag? {
        switch self {
        case .read, .encryptRead, .encryptAuthenticatedRead, .secureRead: .read
        case .write, .encryptWrite, .encryptAuthenticatedWrite, .secureWrite: .write
        case .writeWithoutResponse: .writeWithoutResponse
        case .notify, .encryptNotify, .encryptAuthenticatedNotify, .secureNotify: .notify
        case .indicate, .encryptIndicate, .encryptAuthenticatedIndicate, .secureIndicate: .indicate
        case .reliableWrite: .reliableWrite
        case .authenticatedSignedWrites: .authenticatedSignedWrites
        case .broadcast, .extendedProperties, .writableAuxiliaries, .authorize: nil
        }
    }

    /// True for flags BlueZ accepts on a descriptor: read, write and their security variants, and authorize.
    package var isAllowedOnDescriptor: Bool {
        switch self {
        case .read, .write, .encryptRead, .encryptWrite, .encryptAuthenticatedRead, .encryptAuthenticatedWrite,
            .secureRead, .secureWrite, .authorize:
            true
        default:
            false
        }
    }

    /// Parses a BlueZ flag string, with an error naming the unknown flag.
    package init(parsing text: String) throws(BluetoothValueError) {
        guard let flag = GATTCharacteristicFlag(rawValue: text) else {
            throw BluetoothValueError("\"\(text)\" is not a BlueZ characteristic flag")
        }
        self = flag
    }
}

extension Collection<GATTCharacteristicFlag> {
    /// The base properties the flags grant together (see ``GATTCharacteristicFlag/impliedProperty``).
    package var impliedProperties: Set<GATTCharacteristicFlag> { Set(compactMap(\.impliedProperty)) }
}
