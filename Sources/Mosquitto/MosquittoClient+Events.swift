package import MQTTCore

extension MosquittoClient {
    /// A change of the link to the broker.
    package typealias ConnectionEvent = MQTTConnectionEvent

    /// Counters of everything the client did since it started.
    package struct Statistics: Sendable, Equatable {
        package var messagesReceived = 0
        package var messagesPublished = 0
        /// QoS 1/2 publishes the broker acknowledged with a failure reason code.
        package var publishesRefused = 0
        /// Publishes currently waiting for their acknowledgement (queued while offline included).
        package var outstandingPublishes = 0
        package var connects = 0
        package var disconnects = 0
        package var readPauses = 0
        package var timePaused: Duration = .zero
        /// Read passes forced because a pause reached its cap (see `MosquittoClient`).
        package var pauseCapHits = 0
        /// The most messages the inbound buffer ever held.
        package var inboundBufferPeak = 0
        package var inboundBuffered = 0
        /// Loop turns whose publishes left together: the socket was corked from the turn's third publish to its end.
        package var coalescedTurns = 0
        /// QoS 0 publishes written by the client itself (`DirectPublishes`), and the system calls that wrote them.
        package var directPublishes = 0
        package var directWrites = 0
        /// QoS 0 publishes the client had taken but not written in full when their link went.
        package var messagesLostWithLink = 0
    }
}
