import COpenSSL
import Synchronization

/// AES-CCM decryption that keeps one libcrypto context per key, nonce length and tag length, so that an encrypted
/// advertisement neither builds and frees a context nor expands its key again: about half of the 8,600 instructions
/// ``AESCCM/open(ciphertext:key:nonce:tag:additionalData:)`` takes. libcrypto fixes CCM's nonce and tag
/// lengths when the key is set, hence the three-part lookup; a configuration has one key per encrypted device and
/// one pair of lengths per format.
///
/// Bounds: contexts are kept for at most ``capacity`` lookups; one more lets every kept context go. A context whose
/// operation failed (a forged or corrupt advertisement) is freed rather than reused, so a failure leaves no state
/// behind. Safe from any thread: each operation holds a lock, for a few microseconds.
package final class AESCCMKeyring: Sendable {
    /// Contexts kept at most: far above the encrypted devices one gateway hears.
    package static let capacity = 256

    private struct Lookup: Hashable {
        let key: [UInt8]
        let nonceLength: Int
        let tagLength: Int

        /// The key's bytes hashed in one piece: an array hashes its count and then each byte on its own, some 500
        /// instructions for every encrypted advertisement.
        func hash(into hasher: inout Hasher) {
            key.withUnsafeBytes { hasher.combine(bytes: $0) }
            hasher.combine(nonceLength &<< 8 | tagLength)
        }
    }

    private let contexts = Mutex<[Lookup: DecryptionContext]>([:])

    package init() {}

    /// Contexts kept now.
    package var keptContexts: Int { contexts.withLock { $0.count } }

    /// Decrypts `ciphertext` and checks its authentication `tag`, as ``AESCCM/open(ciphertext:key:nonce:tag:additionalData:)``
    /// does, with the same bounds and errors.
    package func open(
        ciphertext: [UInt8], key: [UInt8], nonce: [UInt8], tag: [UInt8], additionalData: [UInt8] = []
    ) throws(AESCCMError) -> [UInt8] {
        try ciphertext.withUnsafeBytes { ciphertext in
            nonce.withUnsafeBytes { nonce in
                tag.withUnsafeBytes { tag in
                    additionalData.withUnsafeBytes { additionalData in
                        Result { () throws(AESCCMError) in
                            try open(
                                ciphertext: ciphertext, key: key, nonce: nonce, tag: tag,
                                additionalData: additionalData)
                        }
                    }
                }
            }
        }.get()
    }

    /// `open`, with every part but the key read where it lies (slices of an advertisement, a nonce on the stack).
    package func open(
        ciphertext: UnsafeRawBufferPointer, key: [UInt8], nonce: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer,
        additionalData: UnsafeRawBufferPointer
    ) throws(AESCCMError) -> [UInt8] {
        try AESCCM.validate(
            keyLength: key.count, nonceLength: nonce.count, tagLength: tag.count, messageLength: ciphertext.count,
            additionalDataLength: additionalData.count)
        let lookup = Lookup(key: key, nonceLength: nonce.count, tagLength: tag.count)
        return try contexts.withLock { contexts throws(AESCCMError) -> [UInt8] in
            let context: DecryptionContext
            if let kept = contexts[lookup] {
                context = kept
            } else {
                if contexts.count >= Self.capacity { contexts.removeAll() }
                context = try DecryptionContext(key: key, nonceLength: nonce.count, tagLength: tag.count)
                contexts[lookup] = context
            }
            do throws(AESCCMError) {
                return try context.open(ciphertext: ciphertext, nonce: nonce, tag: tag, additionalData: additionalData)
            } catch {
                contexts[lookup] = nil
                throw error
            }
        }
    }
}

/// One libcrypto CCM decryption context with its key set (and with it the nonce and tag lengths); each operation
/// gives it a nonce and a tag. Used only under ``AESCCMKeyring``'s lock.
private final class DecryptionContext: @unchecked Sendable {
    // @unchecked: used only under the keyring's lock (an operation hands it pointers, which are not Sendable, and the
    // checker would otherwise tie the whole table to the caller's task).
    private let pointer: OpaquePointer

    init(key: [UInt8], nonceLength: Int, tagLength: Int) throws(AESCCMError) {
        guard let pointer = EVP_CIPHER_CTX_new() else { throw .libraryFailure("EVP_CIPHER_CTX_new") }
        self.pointer = pointer
        // Freed by deinit from here on, also when a step below fails.
        guard EVP_CipherInit_ex(pointer, EVP_aes_128_ccm(), nil, nil, nil, 0) == 1 else {
            throw .libraryFailure("EVP_CipherInit_ex(aes-128-ccm)")
        }
        guard EVP_CIPHER_CTX_ctrl(pointer, EVP_CTRL_AEAD_SET_IVLEN, Int32(nonceLength), nil) == 1 else {
            throw .libraryFailure("EVP_CTRL_AEAD_SET_IVLEN")
        }
        guard EVP_CIPHER_CTX_ctrl(pointer, EVP_CTRL_AEAD_SET_TAG, Int32(tagLength), nil) == 1 else {
            throw .libraryFailure("EVP_CTRL_AEAD_SET_TAG(length)")
        }
        guard EVP_CipherInit_ex(pointer, nil, nil, key, nil, 0) == 1 else {
            throw .libraryFailure("EVP_CipherInit_ex(key)")
        }
    }

    deinit { EVP_CIPHER_CTX_free(pointer) }

    /// The tag, then the nonce (the key stays), then the updates (`AESCCM.update`).
    func open(
        ciphertext: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer,
        additionalData: UnsafeRawBufferPointer
    ) throws(AESCCMError) -> [UInt8] {
        // libcrypto copies the tag (into the cipher's parameters) and writes nothing through the pointer, whose
        // parameter is not const. Read in place: a mutable copy of the tag allocated one for every encrypted
        // advertisement.
        let tagSet = EVP_CIPHER_CTX_ctrl(
            pointer, EVP_CTRL_AEAD_SET_TAG, Int32(tag.count), UnsafeMutableRawPointer(mutating: tag.baseAddress))
        guard tagSet == 1 else { throw .libraryFailure("EVP_CTRL_AEAD_SET_TAG") }
        let nonceBytes = nonce.baseAddress?.assumingMemoryBound(to: UInt8.self)
        guard EVP_CipherInit_ex(pointer, nil, nil, nil, nonceBytes, 0) == 1 else {
            throw .libraryFailure("EVP_CipherInit_ex(nonce)")
        }
        return try AESCCM.update(pointer, input: ciphertext, additionalData: additionalData, encrypting: false)
    }
}
