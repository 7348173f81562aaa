/// A broker address from configuration: `mqtt://host[:1883]` or `mqtts://host[:8883]` (TLS).
///
/// IPv6 literals are written in brackets (`mqtt://[::1]:1883`). Paths, queries and credentials in the URL are
/// refused: credentials come from their own (secret) settings, never from a URL that may be logged.
package struct MQTTBrokerURL: Sendable, Hashable, CustomStringConvertible {
    package let host: String
    package let port: Int
    package let usesTLS: Bool

    package init(host: String, port: Int? = nil, usesTLS: Bool = false) {
        self.host = host
        self.usesTLS = usesTLS
        self.port = port ?? (usesTLS ? 8883 : 1883)
    }

    /// A broker on this machine listening on the unix domain socket at `path`: libmosquitto reads a host with port 0
    /// as a socket's path.
    package static func unixSocket(_ path: String) -> MQTTBrokerURL {
        MQTTBrokerURL(host: path, port: 0)
    }

    /// Whether `host` is the path of a unix domain socket.
    package var usesUnixSocket: Bool { port == 0 }

    /// Parses `text`, throwing `MQTTError.invalidBrokerURL` with what is wrong.
    package init(parsing text: String) throws(MQTTError) {
        func fail(_ reason: String) -> MQTTError { .invalidBrokerURL(text, reason: reason) }
        let rest: Substring
        let tls: Bool
        if text.hasPrefix("unix://") {
            let path = text.dropFirst("unix://".count)
            guard path.hasPrefix("/"), path.count > 1 else {
                throw fail("a unix socket URL names the socket's absolute path: unix:///path/to/socket")
            }
            self = .unixSocket(String(path))
            return
        } else if text.hasPrefix("mqtt://") {
            rest = text.dropFirst("mqtt://".count)
            tls = false
        } else if text.hasPrefix("mqtts://") {
            rest = text.dropFirst("mqtts://".count)
            tls = true
        } else {
            throw fail("the scheme must be mqtt://, mqtts:// or unix://")
        }
        var authority = rest
        if authority.hasSuffix("/") { authority = authority.dropLast() }
        if authority.contains("/") || authority.contains("?") || authority.contains("#") {
            throw fail("a broker URL has no path or query; write mqtt://host:port")
        }
        if authority.contains("@") {
            throw fail("credentials do not belong in the URL; use the username and password settings")
        }
        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw fail("an IPv6 address needs a closing ']'") }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw fail("expected ':port' after the IPv6 address") }
                portText = after.dropFirst()
            }
        } else if let colon = authority.firstIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        if host.isEmpty { throw fail("the host is missing") }
        var port: Int?
        if let portText {
            guard let value = Int(portText), (1...65_535).contains(value) else {
                throw fail("the port \"\(portText)\" is not a number from 1 to 65535")
            }
            port = value
        }
        self.init(host: String(host), port: port, usesTLS: tls)
    }

    package var description: String {
        if usesUnixSocket { return "unix://\(host)" }
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "\(usesTLS ? "mqtts" : "mqtt")://\(shownHost):\(port)"
    }
}
