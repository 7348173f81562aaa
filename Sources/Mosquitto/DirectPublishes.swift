import Glibc
package import MQTTCore

/// QoS 0 PUBLISH packets the client writes to the broker's socket itself, a loop turn's worth in one system call.
///
/// libmosquitto writes each packet with a system call of its own, and first writes a byte to a socket pair that
/// only wakes a thread of its own (which Gattway does not run, so the pair is full and the write fails): four system
/// calls for an advertisement's state and advert, where a batch of twenty advertisements now takes one. Only
/// plain packets are written here (QoS 0, no properties, a printable ASCII topic, a plain TCP link); everything
/// else, and the link itself, stays libmosquitto's, which runs in threaded mode meanwhile so that it writes only
/// when the client asks it to (`mosquitto_loop_write`), never between two parts of these bytes.
///
/// Order: a packet is added only while libmosquitto holds nothing unsent, so what waits here always goes before
/// what libmosquitto holds, and the client writes these bytes first.
package struct DirectPublishes {
    /// Encoded packets in the first `end` bytes, the first `written` of them written; after `end`, room for the
    /// packets to come (zeros or bytes already written out), written in place: extending an array's count for each
    /// packet cost more than encoding it.
    private var storage: [UInt8] = []
    private var end = 0
    package private(set) var written = 0
    /// Where each packet in `bytes` ends, to count those a lost link takes with it.
    private var packetEnds: [Int] = []
    /// On for a plain TCP link after its CONNACK, with the broker's limits from it.
    var isEnabled = false
    package var maximumPacketSize = Int.max
    package var retainAvailable = true
    /// Set while a flush waits for the end of the loop turn.
    var flushScheduled = false

    package init() {}

    /// At this many unwritten bytes a publish flushes at once, and QoS 0 publishers wait while a flush leaves this
    /// many behind (the socket is full).
    package static let highWater = 256 * 1024

    package var isEmpty: Bool { written == end }
    package var unwritten: Int { end - written }
    /// The encoded packets not yet forgotten, written or not.
    package var bytes: [UInt8] { Array(storage[..<end]) }

    /// Adds `message` as one packet (its QoS and properties are the caller's to check); false, with nothing added,
    /// when it does not qualify (see the type), and then libmosquitto publishes it.
    ///
    /// A struct's method, not the client's: a closure in an actor's method over a library compiled without strict
    /// concurrency checks its executor on entry (some 350 instructions), and this runs twice per publish.
    package mutating func add(_ message: MQTTMessage, version: MQTTProtocolVersion) -> Bool {
        func addWithPayload(_ topic: UnsafeBufferPointer<UInt8>) -> Bool {
            message.payload.withUnsafeBytes { add(topic: topic, payload: $0, retain: message.retain, version: version) }
        }
        // A native topic is read where it lies; `withUTF8` needs a mutable copy, a retain and a release a publish.
        if let added = message.topic.utf8.withContiguousStorageIfAvailable(addWithPayload) { return added }
        var topic = message.topic
        return topic.withUTF8(addWithPayload)
    }

    /// Adds one packet; false, with nothing added, when it does not qualify (see the type) or exceeds the broker's
    /// Maximum Packet Size, and then libmosquitto publishes it.
    package mutating func add(
        topic: UnsafeBufferPointer<UInt8>, payload: UnsafeRawBufferPointer, retain: Bool,
        version: MQTTProtocolVersion
    ) -> Bool {
        guard MQTTPublishPacket.isPlainTopic(topic),
            let size = MQTTPublishPacket.size(topicBytes: topic.count, payloadBytes: payload.count, version: version),
            size <= maximumPacketSize
        else { return false }
        if end + size > storage.count {
            // At least doubled, so that a burst grows the room in few steps.
            storage.append(
                contentsOf: repeatElement(0, count: Swift.max(end + size, storage.count * 2) - storage.count))
        }
        let start = end
        storage.withUnsafeMutableBytes { room in
            // libmosquitto too clears the retain flag when the broker has none (Retain Available 0 in CONNACK).
            _ = MQTTPublishPacket.write(
                topic: topic, payload: payload, retain: retain && retainAvailable, version: version,
                into: UnsafeMutableRawBufferPointer(rebasing: room[start..<(start + size)]))
        }
        end += size
        packetEnds.append(end)
        return true
    }

    package enum FlushResult: Equatable {
        case drained
        /// The socket is full; the rest waits for it to be writable.
        case blocked
        case failed(String)
    }

    /// Writes what waits to `socket` until it is all written or the socket is full.
    package mutating func flush(to socket: Int32) -> FlushResult {
        while written < end {
            let sent = storage.withUnsafeBytes { all in
                send(socket, all.baseAddress! + written, end - written, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if sent > 0 {
                written += sent
                continue
            }
            if sent < 0 && errno == EINTR { continue }
            if sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return .blocked }
            return .failed(sent < 0 ? String(cString: strerror(errno)) : "the socket took nothing")
        }
        // Kept for the next turn unless a burst grew it.
        if storage.count > Self.highWater * 2 { storage = [] }
        packetEnds.removeAll(keepingCapacity: true)
        end = 0
        written = 0
        return .drained
    }

    /// Forgets everything unwritten (the link is gone); how many packets were not written in full.
    package mutating func discard() -> Int {
        let lost = packetEnds.count { $0 > written }
        storage = []
        packetEnds.removeAll(keepingCapacity: false)
        end = 0
        written = 0
        flushScheduled = false
        return lost
    }
}
