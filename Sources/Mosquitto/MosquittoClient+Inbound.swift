import Logging
package import MQTTCore
import Synchronization

extension MosquittoClient {
    /// Sets the tap that sees each message first (see `MQTTClient.tapInbound`).
    package nonisolated func tapInbound(_ tap: @escaping @Sendable (MQTTMessage) -> Bool) {
        let box = InboundTap(take: tap)
        inboundTap.withLock { $0 = box }
    }

    func messageReceived(_ message: MQTTMessage) {
        if let tap = inboundTap.withLock({ $0 }), tap.take(message) {
            statistics.messagesReceived += 1
            return
        }
        inbound.append(message)
        statistics.messagesReceived += 1
        statistics.inboundBufferPeak = max(statistics.inboundBufferPeak, inbound.count)
        if !readsPaused
            && (inbound.count >= options.inboundBuffer.highWater
                || inbound.byteCount >= options.inboundBuffer.highWaterBytes)
        {
            pauseReads()
        }
        resumeWaits(.inbound)
    }

    /// Takes up to `maximum` buffered messages, waiting for one if none is there. Returns an empty batch when the
    /// client has stopped and the buffer is drained, or when the calling task is cancelled.
    func takeInbound(maximum: Int) async -> [MQTTMessage] {
        while inbound.isEmpty {
            if state == .stopped { return [] }
            do {
                try await wait(for: .inbound, operation: "receiving", timeout: nil)
            } catch {
                return []
            }
        }
        let batch = inbound.take(maximum)
        if readsPaused && inbound.count <= options.inboundBuffer.lowWater
            && inbound.byteCount <= options.inboundBuffer.highWaterBytes / 4
        {
            resumeReads()
        }
        return batch
    }

    /// Stops reading the socket: the broker keeps further messages (at most `receiveMaximum` unacknowledged).
    private func pauseReads() {
        readsPaused = true
        pauseStarted = .now
        statistics.readPauses += 1
        socketWatch?.pauseReading()
        logger.debug("mqtt.inbound.paused", metadata: [LogKey.buffered: "\(inbound.count)"])
    }

    private func resumeReads() {
        readsPaused = false
        if let pauseStarted { statistics.timePaused += ContinuousClock.now - pauseStarted }
        pauseStarted = nil
        socketWatch?.resumeReading()
    }
}

/// The inbound tap, held in a class so that reading it out of its lock hands out the same function every time.
final class InboundTap: Sendable {
    let take: @Sendable (MQTTMessage) -> Bool

    init(take: @escaping @Sendable (MQTTMessage) -> Bool) {
        self.take = take
    }
}
