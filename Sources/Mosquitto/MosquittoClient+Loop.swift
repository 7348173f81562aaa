import CMosquitto
import Logging
import MQTTCore
import Polling

extension MosquittoClient {
    /// Connects (or reconnects) now. `mosquitto_connect` does a blocking TCP connect on the client's own loop,
    /// never on the cooperative pool; the CONNECT packet follows and CONNACK arrives through the read source.
    func attemptConnect() {
        guard state == .idle || state == .waitingToReconnect, let handle = handle?.pointer else { return }
        state = .connecting
        let broker = options.broker
        let keepAlive = Int32(clamping: max(options.keepAlive.components.seconds, 5))
        let rc = connect(handle, keepAlive: keepAlive)
        guard rc == MosquittoResult.success else {
            let error: MQTTError =
                rc == MOSQ_ERR_TLS.rawValue
                ? .tlsSetupFailed(reason: "TLS handshake with \(broker) failed: \(MosquittoResult.text(rc))")
                : MosquittoResult.unreachable(rc, broker: broker)
            connectionLost(error)
            return
        }
        do {
            try startWatching(handle)
        } catch {
            connectionLost(
                .library(operation: "watching the broker socket", code: MOSQ_ERR_ERRNO.rawValue, reason: "\(error)"))
            return
        }
        let timeout = options.connectTimeout
        connectTimer?.cancel()
        connectTimer = loop.schedule(after: timeout) { [self] in
            self.loopIsolated { client in
                guard client.state == .connecting else { return }
                client.connectionLost(.timeout(operation: "connecting to \(broker)", after: timeout))
            }
        }
        updateWriteInterest()
    }

    /// `mosquitto_connect`, with MQTT 5 the Maximum Packet Size in CONNECT so that the broker never sends a
    /// packet larger than `options.maximumPacketSize` (it drops such messages for this client instead).
    private func connect(_ handle: OpaquePointer, keepAlive: Int32) -> Int32 {
        let broker = options.broker
        guard options.protocolVersion == .v5, let maximum = options.maximumPacketSize else {
            return mosquitto_connect(handle, broker.host, Int32(broker.port), keepAlive)
        }
        var properties: OpaquePointer?
        let added = mosquitto_property_add_int32(
            &properties, Int32(MQTT_PROP_MAXIMUM_PACKET_SIZE.rawValue), UInt32(clamping: maximum))
        guard added == MosquittoResult.success else { return added }
        // libmosquitto copies the CONNECT properties; the list stays ours to free.
        defer { mosquitto_property_free_all(&properties) }
        return mosquitto_connect_bind_v5(handle, broker.host, Int32(broker.port), keepAlive, nil, properties)
    }

    private func startWatching(_ handle: OpaquePointer) throws(PollLoopError) {
        stopWatching()
        let watch = try SocketWatch(
            socket: mosquitto_socket(handle), loop: loop,
            readable: { [self] in self.loopIsolated { $0.socketReadable(forced: false) } },
            writable: { [self] in self.loopIsolated { $0.socketWritable() } })
        if readsPaused { watch.pauseReading() }
        socketWatch = watch
    }

    func stopWatching() {
        socketWatch?.cancel()
        socketWatch = nil
        discardDirectPublishes()
    }

    /// Reads every packet the kernel holds (up to 256 per event), unless the inbound buffer asks to pause.
    func socketReadable(forced: Bool) {
        guard let handle = handle?.pointer, let watch = socketWatch else { return }
        // The broker's answer to our own publish (a lone PUBACK) is the segment its Nagle holds everything behind
        // until we acknowledge it; our side, having just sent, delays that ACK. Acknowledge such reads at once
        // (see `acknowledgeQuickly`); a plain inbound flood keeps the delayed ACKs that let the broker coalesce.
        let awaitingAcknowledgements = !outstanding.isEmpty
        var passes = 0
        repeat {
            let rc = mosquitto_loop_read(handle, 1)
            guard rc == MosquittoResult.success else {
                if socketWatch === watch { disconnectReceived(rc) }
                return
            }
            passes += 1
            if socketWatch !== watch { return }  // a callback ended this connection
            if readsPaused && !forced { break }
        } while passes < 256 && watch.bytesWaiting > 0
        if awaitingAcknowledgements, !options.broker.usesUnixSocket { watch.acknowledgeQuickly() }
        updateWriteInterest()
    }

    func socketWritable() {
        writeOut()
    }

    /// Watches for writability only while bytes wait for a full socket; wakes QoS 0 publishers when there is room.
    /// In threaded mode (a plain link) libmosquitto writes only when asked: what it queued goes out at the end of
    /// this turn, after the turn's own packets, as it would otherwise have gone at once.
    func updateWriteInterest() {
        guard let handle = handle?.pointer else { return }
        let libmosquittoHolds = mosquitto_want_write(handle)
        if writesPlainPublishes {
            if libmosquittoHolds && !writeBlocked && socketWatch != nil { scheduleWriteOut() }
            socketWatch?.watchWrites(writeBlocked)
        } else {
            socketWatch?.watchWrites(libmosquittoHolds)
        }
        if hasRoomForQoS0 {
            resumeWaits(.writeDrained)
            capacityReturned()
        }
    }

    /// The keepalive tick: `mosquitto_loop_misc` sends PINGREQ and notices a dead link; it also enforces the pause cap.
    func startKeepaliveTimer() {
        let interval = min(Duration.seconds(1), options.maximumPause / 2)
        keepaliveTimer = loop.schedule(after: interval, repeating: interval) { [self] in
            self.loopIsolated { $0.keepaliveTick() }
        }
    }

    private func keepaliveTick() {
        guard let handle = handle?.pointer, state == .connecting || state == .connected else { return }
        _ = mosquitto_loop_misc(handle)  // a keepalive failure arrives through on_disconnect
        if readsPaused, let started = pauseStarted, ContinuousClock.now - started >= options.maximumPause {
            statistics.pauseCapHits += 1
            statistics.timePaused += ContinuousClock.now - started
            pauseStarted = .now
            logger.warning("mqtt.inbound.pause_cap", metadata: [LogKey.buffered: "\(inbound.count)"])
            socketReadable(forced: true)
        }
        updateWriteInterest()
    }

    /// Ends the current attempt or connection; retries after a backoff delay unless retrying cannot help.
    func connectionLost(_ error: MQTTError) {
        guard state == .connecting || state == .connected else { return }
        let wasConnected = state == .connected
        stopWatching()
        connectTimer?.cancel()
        connectTimer = nil
        lastConnectionError = error
        if wasConnected { statistics.disconnects += 1 }
        eventContinuation.yield(.disconnected(error))
        // Subscriptions in flight are re-sent with all the others on reconnect; their callers need not wait.
        resumeWaits(
            where: { if case .suback = $0 { true } else if case .unsuback = $0 { true } else { false } },
            with: .success(()))
        resumeWaits(.writeDrained)  // QoS 0 publishers see the state and fail with notConnected
        capacityReturned()
        guard error.isRetriable else {
            fail(error)
            resumeWaits(.connected, with: .failure(error))
            return
        }
        state = .waitingToReconnect
        let delay = backoff.next()
        logger.warning(
            wasConnected ? "mqtt.disconnected" : "mqtt.connect_failed",
            metadata: [LogKey.error: "\(error)", LogKey.delay: "\(delay)"])
        reconnectTimer?.cancel()
        reconnectTimer = loop.schedule(after: delay) { [self] in self.loopIsolated { $0.attemptConnect() } }
    }
}
