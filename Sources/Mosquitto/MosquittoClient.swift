import CMosquitto
package import Logging
package import MQTTCore
package import Polling
import ServiceLifecycle
import Synchronization

/// An MQTT client over libmosquitto, driven by Gattway's own loop; a `Service` whose `run()` keeps the link up.
///
/// All libmosquitto calls happen on the actor's `PollLoop` (libmosquitto is not thread-safe in unthreaded mode), so
/// its C callbacks arrive on the loop thread too and re-enter the actor with `loopIsolated`. The broker socket is
/// a watch of the loop (on a `dup()` of `mosquitto_socket()`), a 1 Hz timer runs `mosquitto_loop_misc`
/// (keepalive), and lost links are re-established with jittered exponential backoff, re-subscribing every filter
/// passed to `subscribe`.
///
/// Bounds libmosquitto lacks:
/// - Outgoing: at most `maxOutstandingPublishes` QoS 1/2 messages are un-acknowledged; QoS 0 waits while the
///   socket's output buffer is full.
/// - Incoming: received messages wait in a buffer for the consumer of `messages`. At `highWater` the client stops
///   reading the socket, so the broker holds further messages (it sends at most `receiveMaximum` unacknowledged
///   ones); reading resumes at `lowWater`. One read pass can deliver a few messages past `highWater` (libmosquitto
///   reads one packet per outstanding publish), so the buffer holds at most `highWater + maxOutstandingPublishes`.
/// - Incoming bytes: the buffer also pauses reads at `InboundBuffer.highWaterBytes` of payload, and a payload
///   over `maximumInboundPayload` is never copied out of libmosquitto (only its first bytes, flagged oversize).
///   With MQTT 5 the CONNECT carries `maximumPacketSize`, so the broker does not send larger packets at all.
/// - Pause cap: a pause may not last longer than `maximumPause` (half the keepalive by default), because while
///   the socket is not read libmosquitto cannot see PINGRESP and would close the link. When the cap is reached
///   one read pass runs anyway (at most 256 packets, enough to take in the broker's PINGRESP), which may put up to
///   256 more messages in the buffer; then reads pause again for another period. Each such pass is counted in
///   `Statistics.pauseCapHits` and logged.
///
/// The loop's handlers (socket watch, timers, timeouts) hold the client strongly: a weak reference would give it a
/// side table, and every retain and release of it, several per message, would take the runtime's slow path. The
/// watch and the timers end when `run()` returns; a wait's timeout holds the client until it fires at the latest.
package actor MosquittoClient: Service, MQTTClient, LoopActor {
    /// The loop every libmosquitto call of this client runs on.
    package nonisolated let loop: PollLoop
    package nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    package nonisolated let options: Options
    let logger: Logger
    let handle: MosquittoHandle?
    /// A configuration problem found in `init`, thrown by `run()` and by publishes.
    let setupError: MQTTError?

    enum LinkState { case idle, connecting, connected, waitingToReconnect, stopping, stopped }
    var state = LinkState.idle
    var hasConnectedBefore = false
    /// Set once `run()` has been asked to return; the link stays usable for the shutdown messages until then.
    var stopRequested = false
    var lastConnectionError: MQTTError?
    var backoff: JitteredBackoff

    /// The socket watchers of the current connection.
    var socketWatch: SocketWatch?
    var keepaliveTimer: LoopTimer?
    var connectTimer: LoopTimer?
    var reconnectTimer: LoopTimer?

    /// Remembered subscriptions, in the order they were made, re-sent after every reconnect.
    var subscriptions: [(filter: String, qos: MQTTQoS, options: MQTTSubscriptionOptions)] = []
    /// Message ids of QoS 1/2 publishes not yet acknowledged.
    var outstanding = Set<Int32>()
    var subscribeResults: [Int32: [Int32]] = [:]

    var inbound = InboundQueue()
    /// Sees each received message before `inbound` does, on the loop (`tapInbound`). Boxed: a function stored in a
    /// generic container is re-abstracted on every read, and the thunks pile up.
    nonisolated let inboundTap = Mutex<InboundTap?>(nil)
    var readsPaused = false
    var pauseStarted: ContinuousClock.Instant?

    var waits = PendingWaits()
    /// Synchronous publishers (`publishOnLoop`) waiting for capacity; each runs once when capacity returns.
    var capacityCallbacks: [@Sendable () -> Void] = []
    var nextWaitID: UInt64 = 0
    var statistics = Statistics()
    /// The loop turn of the last publish, how many publishes fell in it, and whether it corked the socket (see
    /// `coalesceWrites`).
    var publishTurn: UInt64 = 0
    /// Plain QoS 0 packets this client writes itself, and whether what waits to be written met a full socket.
    var direct = DirectPublishes()
    var writeBlocked = false
    /// Bytes of QoS 0 messages libmosquitto queued since it last wrote (see `hasRoomForQoS0`).
    var queuedInLibmosquitto = 0
    var publishesThisTurn = 0
    var corkedThisTurn = false

    let eventContinuation: AsyncStream<ConnectionEvent>.Continuation
    /// Link changes, newest 64 kept when nobody listens (older ones are dropped: only the recent state matters).
    /// Single consumer.
    package nonisolated let connectionEvents: AsyncStream<ConnectionEvent>

    /// `loop`: the loop to run on, when the client is to share it with what feeds it (the daemon's system-bus
    /// connection and notification sockets, so that a value is read and published in one turn of one thread);
    /// nil for a loop of its own. Throws only when a loop of its own cannot be started (out of threads or
    /// descriptors).
    package init(options: Options, logger: Logger, loop: PollLoop? = nil) throws(MQTTError) {
        do {
            self.loop = try loop ?? PollLoop(name: "mqtt.\(options.clientID)")
        } catch {
            throw .library(
                operation: "starting the MQTT client's loop", code: MOSQ_ERR_ERRNO.rawValue, reason: "\(error)")
        }
        self.options = options
        var logger = logger
        logger[metadataKey: LogKey.broker] = "\(options.broker)"
        logger[metadataKey: LogKey.clientID] = "\(options.clientID)"
        self.logger = logger
        backoff = options.reconnectBackoff
        (connectionEvents, eventContinuation) = AsyncStream.makeStream(
            of: ConnectionEvent.self, bufferingPolicy: .bufferingNewest(64))
        let handle = MosquittoHandle(clientID: options.clientID, cleanStart: options.cleanStart)
        self.handle = handle
        if let pointer = handle?.pointer {
            do {
                try Self.configure(pointer, options)
                setupError = nil
            } catch {
                setupError = error
            }
        } else {
            setupError = .library(
                operation: "creating the MQTT client", code: MOSQ_ERR_NOMEM.rawValue,
                reason: "mosquitto_new failed (out of memory or invalid client id)")
        }
    }

    /// Received messages, in order, with inbound backpressure (see the type's documentation). Single consumer;
    /// it ends when `run()` has returned and the buffer is drained, or when the consuming task is cancelled.
    package nonisolated var messages: MQTTInboundStream {
        MQTTInboundStream { [self] maximum in await self.takeInbound(maximum: maximum) }
    }

    /// Counters since the client was created.
    package var currentStatistics: Statistics {
        var snapshot = statistics
        snapshot.outstandingPublishes = outstanding.count
        snapshot.inboundBuffered = inbound.count
        if let pauseStarted { snapshot.timePaused += ContinuousClock.now - pauseStarted }
        return snapshot
    }

    /// True while a CONNACK-confirmed link is up.
    package var isConnected: Bool { state == .connected }

    /// Connects, keeps the link up and returns on cancellation or graceful shutdown, after publishing
    /// `shutdownMessages` (graceful only) and sending DISCONNECT. Throws when the configuration is unusable or the
    /// broker refuses the connection for a reason retrying cannot fix (e.g. bad credentials).
    package func run() async throws {
        if let setupError { throw setupError }
        guard let pointer = handle?.pointer, state == .idle else { throw MQTTError.clientStopped(operation: "run") }
        // Unretained: the handle is destroyed at the end of this method, while `self` is still alive.
        mosquitto_user_data_set(pointer, Unmanaged.passUnretained(self).toOpaque())
        installCallbacks(pointer)
        startKeepaliveTimer()
        attemptConnect()

        var failure: (any Error)?
        do {
            try await withGracefulShutdownHandler {
                try await wait(for: .stopped, operation: "run", timeout: nil)
            } onGracefulShutdown: { [loop, self] in
                loop.execute { [self] in self.loopIsolated { $0.requestStop(graceful: true) } }
            }
        } catch is CancellationError {
            // Cancellation is the normal way to stop without the graceful steps.
        } catch {
            failure = error
        }
        let graceful = stopRequested && failure == nil && !Task.isCancelled
        if graceful, state == .connected { await publishShutdownMessages() }
        state = .stopping  // from here on, disconnect callbacks are expected and must not schedule reconnects
        tearDown(keepingWill: !graceful)
        if let failure { throw failure }
    }

    /// MQTT 5 DISCONNECT reason "Disconnect with Will Message".
    static let disconnectWithWillMessage: Int32 = 0x04

    /// Asks `run()` to return: `graceful` first publishes the shutdown messages.
    func requestStop(graceful: Bool) {
        guard !stopRequested && state != .stopping && state != .stopped else { return }
        logger.info("mqtt.stopping", metadata: ["graceful": "\(graceful)"])
        stopRequested = true
        resumeWaits(.stopped, with: .success(()))
    }

    /// Stops `run()` with an error that retrying cannot fix.
    func fail(_ error: MQTTError) {
        logger.error("mqtt.failed", metadata: [LogKey.error: "\(error)"])
        stopRequested = true
        state = .stopping
        resumeWaits(.stopped, with: .failure(error))
    }

    private func publishShutdownMessages() async {
        guard !options.shutdownMessages.isEmpty else { return }
        do {
            for message in options.shutdownMessages { try publishNow(message) }
            try await waitForAcks(timeout: options.shutdownTimeout)
        } catch {
            logger.warning("mqtt.shutdown.publish_failed", metadata: [LogKey.error: "\(error)"])
        }
    }

    /// Sends DISCONNECT, stops every source, destroys the handle and ends streams.
    ///
    /// A graceful stop has published its own goodbye, so its DISCONNECT suppresses the Last Will. A stop without
    /// one (cancelled, say because shutdown took too long) keeps the Will, so the broker still says `offline` for
    /// us: MQTT 5 asks for it with reason 0x04, and MQTT 3.1.1, which has no such reason, closes without DISCONNECT.
    private func tearDown(keepingWill: Bool) {
        if handle?.pointer != nil, socketWatch != nil {
            writeOut()  // what the last turn published goes before DISCONNECT
        }
        // A socket too full to take the last publishes gets no DISCONNECT, which would cut into them; the broker
        // then publishes the Will.
        if let pointer = handle?.pointer, socketWatch != nil, direct.isEmpty {
            if !keepingWill {
                _ = mosquitto_disconnect_v5(pointer, 0, nil)
            } else if options.protocolVersion == .v5 {
                _ = mosquitto_disconnect_v5(pointer, Self.disconnectWithWillMessage, nil)
            }
            _ = mosquitto_loop_write(pointer, 1)  // flush DISCONNECT now: nobody watches the socket afterwards
        }
        stopWatching()
        for timer in [keepaliveTimer, connectTimer, reconnectTimer] { timer?.cancel() }
        keepaliveTimer = nil
        connectTimer = nil
        reconnectTimer = nil
        handle?.destroy()
        state = .stopped
        if let pauseStarted { statistics.timePaused += ContinuousClock.now - pauseStarted }
        pauseStarted = nil
        eventContinuation.finish()
        let stopped = MQTTError.clientStopped(operation: "waiting")
        for reason in waits.reasons where reason != .inbound {
            resumeWaits(reason, with: .failure(stopped))
        }
        resumeWaits(.inbound, with: .success(()))
        logger.info("mqtt.stopped")
    }
}
