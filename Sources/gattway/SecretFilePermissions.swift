import BridgeCore
import Glibc

/// Warns about secret files (the MQTT password file, the TLS client key) that users other than the owner can
/// read: anyone who can read them can act as Gattway on the broker.
enum SecretFilePermissions {
    /// One line per secret file readable by group or others; files that cannot be examined are left to the code
    /// that reads them, which reports why.
    static func warnings(for configuration: BridgeConfiguration) -> [String] {
        var files: [(what: String, path: String)] = []
        if case .file(let path) = configuration.mqtt.password { files.append(("mqtt.password_file", path)) }
        if let key = configuration.mqtt.tls?.keyFile { files.append(("mqtt.tls.key_file", key)) }
        return files.compactMap { file in
            var info = stat()
            guard stat(file.path, &info) == 0 else { return nil }
            let exposed = info.st_mode & (S_IRGRP | S_IROTH)
            guard exposed != 0 else { return nil }
            let who = exposed & S_IROTH != 0 ? "everyone" : "its group"
            let mode = String(info.st_mode & 0o777, radix: 8)
            return "warning: \(file.what) \(file.path) is readable by \(who) (mode \(mode)); run chmod 600 \(file.path)"
        }
    }
}
