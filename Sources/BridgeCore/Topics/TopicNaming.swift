/// Rules for the names Gattway puts into MQTT topics.
package enum TopicNaming {
    /// Longest device or characteristic name accepted, in characters.
    package static let maximumLength = ConfigurationDefaults.maximumNameLength

    /// Why `name` cannot be one topic level, or nil when it can.
    package static func problem(withLevelName name: String) -> String? {
        if name.isEmpty { return "must not be empty" }
        if name.count > maximumLength { return "is longer than \(maximumLength) characters" }
        if name.unicodeScalars.contains(where: {
            $0 == "/" || $0 == "+" || $0 == "#" || $0.value < 0x20 || $0.value == 0x7F
        }) {
            return "must not contain /, +, #, NUL or control characters"
        }
        return nil
    }

    /// Why `topic` cannot be the base topic, or nil when it can. Slashes are allowed (`home/ble`).
    package static func problem(withBaseTopic topic: String) -> String? {
        if topic.isEmpty { return "must not be empty" }
        if topic.hasPrefix("/") || topic.hasSuffix("/") || topic.contains("//") { return "must not have empty levels" }
        if topic.unicodeScalars.contains(where: { $0 == "+" || $0 == "#" || $0.value < 0x20 }) {
            return "must not contain +, #, NUL or control characters"
        }
        return nil
    }

    /// Makes a discovered (advertised) name safe as one topic level: `/ + #`, NUL and control characters become
    /// `_`, surrounding whitespace is dropped, the length is capped. Nil when nothing usable remains.
    package static func sanitized(_ name: String) -> String? {
        var out = String.UnicodeScalarView()
        for scalar in name.unicodeScalars {
            if scalar == "/" || scalar == "+" || scalar == "#" || scalar.value < 0x20 || scalar.value == 0x7F
                || (0x80..<0xA0).contains(scalar.value)
            {
                out.append("_")
            } else {
                out.append(scalar)
            }
        }
        let trimmed = String(out).trimmingWhitespace()
        guard !trimmed.isEmpty else { return nil }
        return String(trimmed.prefix(maximumLength))
    }
}

extension String {
    /// The text without leading and trailing whitespace (Foundation's `trimmingCharacters` needs full Foundation).
    package func trimmingWhitespace() -> String { trimming(\.isWhitespace) }

    /// The text without the leading and trailing characters `isTrimmed` picks.
    package func trimming(_ isTrimmed: (Character) -> Bool) -> String {
        let start = drop(while: isTrimmed)
        guard let last = start.lastIndex(where: { !isTrimmed($0) }) else { return "" }
        return String(start[...last])
    }
}
