import COpenSSL

/// AES-128 in CCM mode (RFC 3610, NIST SP 800-38C), as BTHome and Xiaomi MiBeacon use it to authenticate and
/// encrypt advertisements, computed by OpenSSL's libcrypto.
///
/// Bounds: keys are 16 bytes, nonces 7–13 bytes, tags 4–16 bytes of even length, and a message or its additional
/// data at most ``maximumLength`` bytes (advertisements are far shorter); anything else is refused before libcrypto
/// sees it. Every call builds and frees its own cipher context, so the type holds no state and is safe from any
/// thread.
package enum AESCCM {
    /// The longest plaintext, ciphertext or additional data accepted: far above an advertisement's 255 bytes, far
    /// below CCM's own limits for a 13-byte nonce.
    package static let maximumLength = 4096

    /// Decrypts `ciphertext` and checks its authentication `tag`.
    /// - Returns: the plaintext, the same length as `ciphertext`.
    /// - Throws: ``AESCCMError`` `.authenticationFailed` when the key, nonce, additional data, ciphertext or tag
    ///   do not belong together, and `.invalidParameter` for a key, nonce or tag of an impossible length.
    package static func open(
        ciphertext: [UInt8], key: [UInt8], nonce: [UInt8], tag: [UInt8], additionalData: [UInt8] = []
    ) throws(AESCCMError) -> [UInt8] {
        try validate(
            key: key, nonce: nonce, tagLength: tag.count, messageLength: ciphertext.count,
            additionalDataLength: additionalData.count)
        return try run(
            encrypting: false, input: ciphertext, key: key, nonce: nonce, tag: tag,
            additionalData: additionalData
        ).output
    }

    /// `open`, with every part but the key read where it lies.
    package static func open(
        ciphertext: UnsafeRawBufferPointer, key: [UInt8], nonce: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer,
        additionalData: UnsafeRawBufferPointer
    ) throws(AESCCMError) -> [UInt8] {
        try open(
            ciphertext: Array(ciphertext), key: key, nonce: Array(nonce), tag: Array(tag),
            additionalData: Array(additionalData))
    }

    /// Encrypts `plaintext` and computes its authentication tag of `tagLength` bytes.
    /// - Throws: ``AESCCMError`` `.invalidParameter` for a key, nonce or tag length CCM does not allow.
    package static func seal(
        plaintext: [UInt8], key: [UInt8], nonce: [UInt8], tagLength: Int, additionalData: [UInt8] = []
    ) throws(AESCCMError) -> (ciphertext: [UInt8], tag: [UInt8]) {
        try validate(
            key: key, nonce: nonce, tagLength: tagLength, messageLength: plaintext.count,
            additionalDataLength: additionalData.count)
        let result = try run(
            encrypting: true, input: plaintext, key: key, nonce: nonce,
            tag: [UInt8](repeating: 0, count: tagLength), additionalData: additionalData)
        return (result.output, result.tag)
    }

    static func validate(
        key: [UInt8], nonce: [UInt8], tagLength: Int, messageLength: Int, additionalDataLength: Int
    ) throws(AESCCMError) {
        try validate(
            keyLength: key.count, nonceLength: nonce.count, tagLength: tagLength, messageLength: messageLength,
            additionalDataLength: additionalDataLength)
    }

    static func validate(
        keyLength: Int, nonceLength: Int, tagLength: Int, messageLength: Int, additionalDataLength: Int
    ) throws(AESCCMError) {
        guard keyLength == 16 else { throw .invalidParameter("key must be 16 bytes, not \(keyLength)") }
        guard (7...13).contains(nonceLength) else {
            throw .invalidParameter("nonce must be 7 to 13 bytes, not \(nonceLength)")
        }
        guard (4...16).contains(tagLength), tagLength % 2 == 0 else {
            throw .invalidParameter("tag must be 4, 6, 8, 10, 12, 14 or 16 bytes, not \(tagLength)")
        }
        guard messageLength <= maximumLength, additionalDataLength <= maximumLength else {
            throw .invalidParameter("message and additional data are limited to \(maximumLength) bytes")
        }
    }

    /// One CCM operation in the order libcrypto requires for CCM: nonce length and tag, then key and nonce, then
    /// the total message length, then the additional data, then the message in a single update.
    private static func run(
        encrypting: Bool, input: [UInt8], key: [UInt8], nonce: [UInt8], tag: [UInt8], additionalData: [UInt8]
    ) throws(AESCCMError) -> (output: [UInt8], tag: [UInt8]) {
        guard let context = EVP_CIPHER_CTX_new() else { throw .libraryFailure("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(context) }
        let doEncrypt: Int32 = encrypting ? 1 : 0
        guard EVP_CipherInit_ex(context, EVP_aes_128_ccm(), nil, nil, nil, doEncrypt) == 1 else {
            throw .libraryFailure("EVP_CipherInit_ex(aes-128-ccm)")
        }
        guard EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_IVLEN, Int32(nonce.count), nil) == 1 else {
            throw .libraryFailure("EVP_CTRL_AEAD_SET_IVLEN")
        }
        // Decrypting sets the expected tag; encrypting sets only its length (a nil pointer).
        var expectedTag = tag
        let tagSet =
            encrypting
            ? EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_TAG, Int32(tag.count), nil)
            : expectedTag.withUnsafeMutableBytes {
                EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_TAG, Int32(tag.count), $0.baseAddress)
            }
        guard tagSet == 1 else { throw .libraryFailure("EVP_CTRL_AEAD_SET_TAG") }
        guard EVP_CipherInit_ex(context, nil, nil, key, nonce, doEncrypt) == 1 else {
            throw .libraryFailure("EVP_CipherInit_ex(key, nonce)")
        }
        let output = try input.withUnsafeBytes { input in
            additionalData.withUnsafeBytes { additionalData in
                Result { () throws(AESCCMError) in
                    try update(context, input: input, additionalData: additionalData, encrypting: encrypting)
                }
            }
        }.get()
        guard encrypting else { return (output, []) }
        var computedTag = [UInt8](repeating: 0, count: tag.count)
        let tagRead = computedTag.withUnsafeMutableBytes {
            EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_GET_TAG, Int32(tag.count), $0.baseAddress)
        }
        guard tagRead == 1 else { throw .libraryFailure("EVP_CTRL_AEAD_GET_TAG") }
        return (output, computedTag)
    }

    /// The updates of one CCM operation on a context that has its key and nonce: the total message length, the
    /// additional data, then the message in a single update, where decryption checks the tag.
    static func update(
        _ context: OpaquePointer, input: UnsafeRawBufferPointer, additionalData: UnsafeRawBufferPointer,
        encrypting: Bool
    ) throws(AESCCMError) -> [UInt8] {
        var written: Int32 = 0
        guard EVP_CipherUpdate(context, nil, &written, nil, Int32(input.count)) == 1 else {
            throw .libraryFailure("EVP_CipherUpdate(length)")
        }
        if !additionalData.isEmpty {
            let bytes = additionalData.baseAddress?.assumingMemoryBound(to: UInt8.self)
            guard EVP_CipherUpdate(context, nil, &written, bytes, Int32(additionalData.count)) == 1 else {
                throw .libraryFailure("EVP_CipherUpdate(additional data)")
            }
        }
        // One spare byte so an empty message still has a valid output pointer. Reserved, then filled: made with
        // `Array(repeating:count:)` it was allocated through the standard library's unspecialized path (some 500
        // instructions, for every encrypted advertisement).
        var output: [UInt8] = []
        output.reserveCapacity(input.count + 1)
        output.append(contentsOf: repeatElement(0, count: input.count + 1))
        // An empty message has no address; libcrypto reads no byte of it then, but wants a pointer.
        let inputBytes = input.baseAddress?.assumingMemoryBound(to: UInt8.self)
        let status = output.withUnsafeMutableBufferPointer { buffer in
            EVP_CipherUpdate(
                context, buffer.baseAddress, &written, inputBytes ?? UnsafePointer(buffer.baseAddress),
                Int32(input.count))
        }
        guard status == 1 else {
            if encrypting { throw .libraryFailure("EVP_CipherUpdate(message)") }
            throw .authenticationFailed
        }
        output.removeLast()
        return output
    }
}

/// Why ``AESCCM`` refused or failed an operation.
package enum AESCCMError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The tag did not match: wrong key, wrong nonce or additional data, or altered ciphertext.
    case authenticationFailed
    /// A key, nonce, tag or message length that CCM or this type does not allow.
    case invalidParameter(String)
    /// libcrypto refused a call that valid parameters should never make fail; names the call.
    case libraryFailure(String)

    package var description: String {
        switch self {
        case .authenticationFailed: "AES-CCM authentication failed (wrong key or altered data)"
        case .invalidParameter(let reason): "AES-CCM parameter refused: \(reason)"
        case .libraryFailure(let call): "libcrypto failed in \(call)"
        }
    }
}
