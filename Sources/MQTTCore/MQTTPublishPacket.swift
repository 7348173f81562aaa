/// The bytes of a QoS 0 PUBLISH packet without properties (MQTT 3.1.1 §3.3, MQTT 5 §3.3), for a client that writes
/// such packets to the broker's socket itself.
///
/// Layout: the fixed header (0x30, the retain flag in bit 0; QoS 0 and DUP 0), the Remaining Length as a
/// variable-length integer, the topic as a UTF-8 string (a 16-bit length, then its bytes), with MQTT 5 a Property
/// Length of 0, then the payload. QoS 0 carries no packet identifier.
package enum MQTTPublishPacket {
    /// The largest Remaining Length MQTT can express (four bytes of variable-length integer).
    package static let maximumRemainingLength = 268_435_455

    /// The whole packet's size in bytes, or nil when MQTT cannot carry a topic and payload this long.
    package static func size(topicBytes: Int, payloadBytes: Int, version: MQTTProtocolVersion) -> Int? {
        guard topicBytes <= MQTTTopic.maximumByteCount, payloadBytes >= 0,
            payloadBytes <= maximumRemainingLength
        else { return nil }
        let remaining = 2 + topicBytes + (version == .v5 ? 1 : 0) + payloadBytes
        guard remaining <= maximumRemainingLength else { return nil }
        return 1 + lengthBytes(remaining) + remaining
    }

    /// Whether a client may write `topic` as it is: one to 65,535 bytes of printable ASCII (0x20–0x7E) without the
    /// wildcards `+` and `#`. A topic with other bytes may still be valid; it goes through the MQTT library, which
    /// checks the rest of MQTT's rules for UTF-8 strings (no control or non-characters) and names what it refuses.
    package static func isPlainTopic(_ topic: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !topic.isEmpty, topic.count <= MQTTTopic.maximumByteCount, let base = topic.baseAddress else {
            return false
        }
        // Eight bytes at a time (every publish is checked): `(w − n·ones) & ~w & highBits` is non-zero exactly when
        // some byte of `w` is below n (n ≤ 0x80), a byte equal to c is a zero byte of `w ^ c·ones`, and a byte of
        // 0x80 or more has its high bit set.
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits: UInt64 = 0x8080_8080_8080_8080
        func hasZeroByte(_ word: UInt64) -> UInt64 { (word &- ones) & ~word }
        func refuses(at index: Int) -> Bool {
            let word = UInt64(littleEndian: UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self))
            let refused =
                word | ((word &- ones &* 0x20) & ~word) | hasZeroByte(word ^ (ones &* 0x7F))
                | hasZeroByte(word ^ (ones &* UInt64(UInt8(ascii: "+"))))
                | hasZeroByte(word ^ (ones &* UInt64(UInt8(ascii: "#"))))
            return refused & highBits != 0
        }
        var index = 0
        while topic.count - index >= 8 {
            if refuses(at: index) { return false }
            index += 8
        }
        // The last bytes of a topic of eight or more as one word that overlaps words already tested, where a test
        // of each byte cost eight instructions a byte.
        if index < topic.count, topic.count >= 8 { return !refuses(at: topic.count - 8) }
        while index < topic.count {
            let byte = topic[index]
            if byte < 0x20 || byte > 0x7E || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "#") { return false }
            index += 1
        }
        return true
    }

    /// Writes the packet at the start of `buffer`, which holds at least `size` bytes for these lengths; returns that
    /// size. The topic must be plain (`isPlainTopic`, checked in debug builds) and `size` must not be nil for these
    /// lengths (checked: a packet MQTT cannot carry would be read wrongly).
    ///
    /// Written in place, where three `Array.append(contentsOf:)` cost some 90 instructions each besides their copies.
    package static func write(
        topic: UnsafeBufferPointer<UInt8>, payload: UnsafeRawBufferPointer, retain: Bool,
        version: MQTTProtocolVersion, into buffer: UnsafeMutableRawBufferPointer
    ) -> Int {
        assert(isPlainTopic(topic), "MQTTPublishPacket: the topic is not plain")
        guard let packetSize = size(topicBytes: topic.count, payloadBytes: payload.count, version: version) else {
            preconditionFailure("MQTTPublishPacket: the packet is too long for MQTT")
        }
        precondition(
            buffer.count >= packetSize, "MQTTPublishPacket: \(buffer.count) bytes hold no \(packetSize)-byte packet")
        let remainingLength = 2 + topic.count + (version == .v5 ? 1 : 0) + payload.count
        buffer[0] = retain ? 0x31 : 0x30
        var at = 1
        var rest = remainingLength
        repeat {
            let digit = UInt8(truncatingIfNeeded: rest & 0x7F)
            rest >>= 7
            buffer[at] = rest > 0 ? digit | 0x80 : digit
            at += 1
        } while rest > 0
        buffer[at] = UInt8(truncatingIfNeeded: topic.count >> 8)
        buffer[at + 1] = UInt8(truncatingIfNeeded: topic.count)
        at += 2
        if let base = topic.baseAddress {
            (buffer.baseAddress! + at).copyMemory(from: base, byteCount: topic.count)
            at += topic.count
        }
        if version == .v5 {  // Property Length: none
            buffer[at] = 0
            at += 1
        }
        if let base = payload.baseAddress, !payload.isEmpty {
            (buffer.baseAddress! + at).copyMemory(from: base, byteCount: payload.count)
            at += payload.count
        }
        assert(at == packetSize, "MQTTPublishPacket: the packet's length was counted wrongly")
        return packetSize
    }

    /// How many bytes the variable-length integer `value` takes (MQTT 3.1.1 §2.2.3).
    static func lengthBytes(_ value: Int) -> Int {
        switch value {
        case ..<128: 1
        case ..<16_384: 2
        case ..<2_097_152: 3
        default: 4
        }
    }
}
