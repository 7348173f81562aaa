import MQTTCore
import Testing

/// QoS 0 PUBLISH packets as MQTT 3.1.1 §3.3 and MQTT 5 §3.3 lay them out, byte for byte.
@Suite struct MQTTPublishPacketTests {
    private func packet(
        _ topic: String, _ payload: [UInt8], retain: Bool = false, version: MQTTProtocolVersion = .v5
    ) -> [UInt8] {
        let size = MQTTPublishPacket.size(
            topicBytes: topic.utf8.count, payloadBytes: payload.count, version: version)!
        // One byte more than the packet: the write takes exactly its size.
        var bytes = [UInt8](repeating: 0xEE, count: size + 1)
        var topic = topic
        let written = topic.withUTF8 { topic in
            payload.withUnsafeBytes { payload in
                bytes.withUnsafeMutableBytes { buffer in
                    MQTTPublishPacket.write(
                        topic: topic, payload: payload, retain: retain, version: version, into: buffer)
                }
            }
        }
        #expect(written == size && bytes.last == 0xEE)
        return Array(bytes.dropLast())
    }

    @Test func mqtt311HasNoPropertyLength() {
        #expect(
            packet("a/b", [1, 2], version: .v311)
                == [0x30, 7, 0, 3, UInt8(ascii: "a"), UInt8(ascii: "/"), UInt8(ascii: "b"), 1, 2])
    }

    @Test func mqtt5HasAnEmptyPropertyLengthAndTheRetainFlagIsBitZero() {
        #expect(packet("t", [9], retain: true) == [0x31, 5, 0, 1, UInt8(ascii: "t"), 0, 9])
        #expect(packet("t", []) == [0x30, 4, 0, 1, UInt8(ascii: "t"), 0])
    }

    /// The Remaining Length takes one more byte at each of 128, 16,384 and 2,097,152 (MQTT 3.1.1 §2.2.3).
    @Test(arguments: [
        (123, [UInt8(127)]), (124, [0x80, 0x01]), (16_379, [0xFF, 0x7F]), (16_380, [0x80, 0x80, 0x01]),
    ])
    func remainingLengthIsAVariableLengthInteger(payloadBytes: Int, encoded: [UInt8]) {
        // Remaining Length = 2 (topic length) + 1 (topic) + 1 (property length) + payload.
        let bytes = packet("t", [UInt8](repeating: 0x41, count: payloadBytes))
        #expect(Array(bytes[1...encoded.count]) == encoded)
        #expect(bytes.count == 1 + encoded.count + 4 + payloadBytes)
        #expect(MQTTPublishPacket.size(topicBytes: 1, payloadBytes: payloadBytes, version: .v5) == bytes.count)
    }

    @Test func sizeRefusesWhatMQTTCannotCarry() {
        #expect(MQTTPublishPacket.size(topicBytes: 65_536, payloadBytes: 0, version: .v5) == nil)
        #expect(MQTTPublishPacket.size(topicBytes: 10, payloadBytes: 268_435_455, version: .v311) == nil)
        #expect(MQTTPublishPacket.size(topicBytes: 10, payloadBytes: -1, version: .v311) == nil)
        #expect(
            MQTTPublishPacket.size(topicBytes: 1, payloadBytes: 268_435_455 - 4, version: .v5) == 1 + 4 + 268_435_455)
    }

    @Test(arguments: [
        ("gattway/bthome_a4c138000001/state", true), ("$SYS/x", true), (" ~", true), ("", false), ("a/+/b", false),
        ("a/#", false), ("tab\there", false), ("del\u{7F}", false), ("caf\u{E9}", false), ("nul\u{0}", false),
    ])
    func plainTopicsArePrintableASCIIWithoutWildcards(topic: String, plain: Bool) {
        var topic = topic
        #expect(topic.withUTF8 { MQTTPublishPacket.isPlainTopic($0) } == plain)
    }

    /// Each refused byte is found at every place of topics of 1 to 24 bytes: in the 8-byte words checked at once, in
    /// the last word that overlaps them, and in the bytes of topics shorter than a word.
    @Test(arguments: [UInt8(ascii: "+"), UInt8(ascii: "#"), 0x1F, 0x00, 0x7F, 0x80, 0xC3, 0xFF])
    func aRefusedByteIsFoundAnywhere(byte: UInt8) {
        for count in 1...24 {
            var base = [UInt8](repeating: UInt8(ascii: "a"), count: count)
            base[0] = 0x20
            base[count - 1] = 0x7E
            #expect(base.withUnsafeBufferPointer { MQTTPublishPacket.isPlainTopic($0) })
            for place in base.indices {
                var topic = base
                topic[place] = byte
                #expect(
                    !topic.withUnsafeBufferPointer { MQTTPublishPacket.isPlainTopic($0) }, "\(count) bytes, at \(place)"
                )
            }
        }
    }

    @Test func aTopicOfTheMostBytesMQTTAllowsIsPlainAndOneMoreIsNot() {
        var longest = String(repeating: "a", count: 65_535)
        var tooLong = longest + "a"
        #expect(longest.withUTF8 { MQTTPublishPacket.isPlainTopic($0) })
        #expect(!tooLong.withUTF8 { MQTTPublishPacket.isPlainTopic($0) })
    }
}
