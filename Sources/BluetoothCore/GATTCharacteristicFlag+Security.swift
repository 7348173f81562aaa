extension GATTCharacteristicFlag {
    /// True for the flags whose access needs an encrypted link (`encrypt-*`, `encrypt-authenticated-*`,
    /// `secure-*`): bluetoothd answers an unencrypted access with Insufficient Encryption or Authentication, so a
    /// remote central has to pair first.
    package var needsEncryption: Bool {
        switch self {
        case .encryptRead, .encryptWrite, .encryptNotify, .encryptIndicate,
            .encryptAuthenticatedRead, .encryptAuthenticatedWrite, .encryptAuthenticatedNotify,
            .encryptAuthenticatedIndicate, .secureRead, .secureWrite, .secureNotify, .secureIndicate:
            true
        default:
            false
        }
    }
}
