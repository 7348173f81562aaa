import AESCCM
import BridgeCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Reads the bindkeys of encrypted advertisement formats from where the configuration says (a file of their own or
/// an environment variable, like the broker password), once at start. A key is never logged.
enum BindkeyLoader {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The bindkey of each configured device that names one, by its index in `devices`.
    static func load(
        _ devices: [DeviceConfiguration], environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(Failure) -> [Int: Bindkey] {
        var keys: [Int: Bindkey] = [:]
        for (index, device) in devices.enumerated() {
            guard let source = device.bindkey else { continue }
            let text: String
            let origin: String
            switch source {
            case .file(let path):
                origin = "devices[\(index)].bindkey_file \(path)"
                guard let contents = try? String(contentsOfFile: path, encoding: .utf8) else {
                    throw Failure(description: "\(origin): cannot read the file")
                }
                text = contents
            case .environment(let name):
                origin = "devices[\(index)].bindkey_env \(name)"
                guard let value = environment[name] else {
                    throw Failure(description: "\(origin): the variable is not set")
                }
                text = value
            }
            guard let key = Bindkey(hex: text.trimmingWhitespace()) else {
                throw Failure(description: "\(origin): a bindkey is 32 hex digits (16 bytes)")
            }
            keys[index] = key
        }
        return keys
    }

    /// OpenSSL's AES-CCM, as the decoders take it: one keyring for the process, so each bindkey's context is set up
    /// once.
    static let openAESCCM: AESCCMOpening = { [keyring = AESCCMKeyring()] ciphertext, key, nonce, tag, additionalData in
        try keyring.open(ciphertext: ciphertext, key: key, nonce: nonce, tag: tag, additionalData: additionalData)
    }
}
