internal import CDBus
import Glibc
import Logging
import Polling

/// The connection's side of `DBusWireRelay`: reading the bus, handing signals to the taps in place, passing every
/// other message to libdbus in order, and writing what libdbus sends.
extension DBusConnection {
    /// Sets up the relay's watches; runs once, from `start()`, when the connection was opened with one.
    func startRelay(_ sockets: OpenedConnection.RelaySockets) {
        do {
            let bus = try loop.watch(
                sockets.bus,
                readable: { [weak self] in self?.loopIsolated { $0.relayBusReadable() } },
                writable: { [weak self] in self?.loopIsolated { $0.relayFlushToBus() } })
            let libdbus = try loop.watch(
                sockets.libdbus,
                readable: { [weak self] in self?.loopIsolated { $0.relayPumpFromLibdbus() } },
                writable: {})
            Glibc.close(sockets.bus)
            Glibc.close(sockets.libdbus)
            relay = DBusWireRelay(bus: bus, libdbus: libdbus, leftover: sockets.leftover)
            bus.setInterest(read: true, write: false)
            libdbus.setInterest(read: true, write: false)
            // NameAcquired, maybe more, came with Hello's reply.
            relayTakeInbound()
        } catch {
            Glibc.close(sockets.bus)
            Glibc.close(sockets.libdbus)
            logger.error("dbus.relay_failed", metadata: ["error": "cannot watch the relay's sockets: \(error)"])
        }
    }

    /// Ends the relay: its sockets close, so libdbus reads the end of its stream and ends the connection as it
    /// would on the bus's going away (`Disconnected`).
    func stopRelay(_ reason: String?) {
        guard let ending = relay else { return }
        relay = nil
        if let reason {
            logger.error("dbus.relay_failed", metadata: ["dbus.unique_name": "\(uniqueName)", "error": "\(reason)"])
        }
        ending.closeDescriptors()
        ending.bus.cancel()
        ending.libdbus.cancel()
    }

    private func relayBusReadable() {
        guard relay != nil, handle != nil else { return }
        // What a pause gathered is read and dispatched in this turn (see `handleWatch`); the end of a pause reads it
        // itself (`endPause`) unless libdbus was behind, and then it comes here.
        if pacing.interval != nil, pacing.lastPauseEnd > pacing.lastRead { loop.expectBurst() }
        relayReadOnce()
        if handle != nil, relay != nil, pacing.interval != nil { readBatch(.relay) }
    }

    /// Reads the bus once and takes in the messages that read completed; whether it read anything.
    @discardableResult
    func relayReadOnce() -> Bool {
        guard relay != nil else { return false }
        switch relay!.readBus() {
        case .read:
            relayTakeInbound()
            return true
        case .wouldBlock: return false
        case .ended: stopRelay(nil)
        case .failed(let reason): stopRelay("reading the bus: \(reason)")
        }
        return false
    }

    /// Cuts what was read into messages: each signal a tap reads in place goes to the taps, every other message to
    /// libdbus, in order.
    private func relayTakeInbound() {
        guard relay != nil else { return }
        // Taken out while the taps run: they may send, which changes the relay's other buffers.
        var bytes = relay!.inbound
        var start = 0
        relay!.inbound = []
        var failure: String?
        bytes.withUnsafeBytes { all in
            while relay != nil, handle != nil {
                let rest = UnsafeRawBufferPointer(rebasing: all[start...])
                switch DBusWireFrame.length(of: rest) {
                case .needMore:
                    return
                case .invalid(let reason):
                    failure = "the bus sent bytes that start no message: \(reason)"
                    return
                case .message(let total):
                    guard rest.count >= total else { return }
                    let message = UnsafeRawBufferPointer(rebasing: rest[..<total])
                    start += total
                    if !takeInPlace(message) {
                        var descriptors: [Int32] = []
                        swap(&descriptors, &relay!.inboundDescriptors)
                        relay!.toLibdbus.append(message, descriptors: descriptors)
                    }
                }
            }
        }
        guard relay != nil else { return }
        // Nothing reads the bus while the taps run: what is left is the start of the next message. The buffer is
        // kept for the next read unless a large message grew it.
        if start == bytes.count {
            bytes.removeAll(keepingCapacity: bytes.capacity <= 4 * DBusWireRelay.readSize)
        } else {
            bytes.removeFirst(start)
        }
        relay!.inbound = bytes
        if let failure {
            stopRelay(failure)
            return
        }
        handOnToLibdbus()
    }

    /// Hands a signal to the taps straight from its bytes, when the taps can read it there: a signal of
    /// PropertiesChanged's signature carrying no descriptors, whose header is all fields of the kinds the
    /// specification defines. Every message before it is dispatched by libdbus first.
    private func takeInPlace(_ message: UnsafeRawBufferPointer) -> Bool {
        guard !taps.isEmpty, message[1] == DBusWireHeader.signal, !relay!.libdbusBehind,
            let header = DBusWireHeader(message: message),
            header.unixFDs == 0, header.hasSignature("sa{sv}as"), header.path != nil, header.interface != nil,
            header.member != nil
        else { return false }
        if !relay!.toLibdbus.isEmpty {
            handOnToLibdbus()
            guard relay != nil, handle != nil else { return true }
            // libdbus still holds messages from before this one: it goes after them.
            if relay!.libdbusBehind { return false }
        }
        var fields = DBusMessageFields(wire: header)
        deliverSignal(DBusSignalMessage(wire: message, header: header), &fields)
        return true
    }

    /// Writes what waits for libdbus into its socket and has libdbus read and dispatch all of it, before anything
    /// after it is taken in place. While libdbus has not read everything it was handed (`libdbusBehind`), every
    /// message goes to it, none is taken in place, so that none overtakes; what waits for it is bounded
    /// (`maxPendingToLibdbus`: beyond it the bus is not read).
    func handOnToLibdbus() {
        guard relay != nil else { return }
        if relay!.libdbusBehind { _ = libdbusReadsAll() }
        while relay != nil, handle != nil, !relay!.toLibdbus.isEmpty {
            switch relay!.toLibdbus.write(to: relay!.libdbus.fileDescriptor) {
            case .drained, .blocked: break
            case .failed(let reason):
                stopRelay("writing to libdbus: \(reason)")
                return
            }
            guard libdbusReadsAll() else { break }
        }
        refreshRelayInterest()
    }

    /// libdbus read through its own watch while it was behind: hand it the rest, then take in what waited.
    func relayCatchUp() {
        handOnToLibdbus()
        if relay?.libdbusBehind == false { relayTakeInbound() }
    }

    /// Has libdbus read everything in its socket and dispatch what it read; false when it stops reading with bytes
    /// left (its queue of received messages full, say): then `libdbusBehind` holds until it has read them, and
    /// nothing is taken in place meanwhile, so nothing overtakes them.
    private func libdbusReadsAll() -> Bool {
        guard let c = handle else { return false }
        let wasScheduled = dispatchScheduled
        dispatchScheduled = true
        defer { dispatchScheduled = wasScheduled }
        var idleReads = 0
        while handle != nil, relay != nil, let socket = libdbusSocket() {
            let pending = gattway_socket_pending(socket)
            // Nothing left (or the socket failed, which libdbus finds out itself when it next reads).
            if pending <= 0 {
                relay?.libdbusBehind = false
                return true
            }
            // Bytes wait but libdbus does not read now: its read watch, or the next message, brings it back (see
            // `relayCatchUp`).
            guard let watch = libdbusReadWatch() else { break }
            dbus_watch_handle(watch, DBUS_WATCH_READABLE.rawValue)
            // Dispatched as read, in order, before anything else is taken: no cap here, unlike `dispatchAll`, since
            // the relay bounds what one turn reads.
            while handle != nil, dbus_connection_dispatch(c) == DBUS_DISPATCH_DATA_REMAINS {}
            if gattway_socket_pending(socket) == pending {
                idleReads += 1
                if idleReads >= 4 { break }
            } else {
                idleReads = 0
            }
        }
        relay?.libdbusBehind = true
        return false
    }

    /// libdbus's socket, from any of its watches.
    private func libdbusSocket() -> Int32? {
        for key in watches.keys {
            guard let watch = OpaquePointer(bitPattern: key) else { continue }
            return dbus_watch_get_unix_fd(watch)
        }
        return nil
    }

    /// libdbus's watch for reading its socket, when it wants to read.
    private func libdbusReadWatch() -> OpaquePointer? {
        for key in watches.keys {
            guard let watch = OpaquePointer(bitPattern: key) else { continue }
            if dbus_watch_get_enabled(watch) != 0, dbus_watch_get_flags(watch) & DBUS_WATCH_READABLE.rawValue != 0 {
                return watch
            }
        }
        return nil
    }

    /// Takes what libdbus wrote and writes it to the bus; called when its socket is readable and right after the
    /// connection queues a message, so that it leaves in the same turn.
    func relayPumpFromLibdbus() {
        guard relay != nil else { return }
        while relay != nil, relay!.toBus.count < DBusWireRelay.maxPendingToBus {
            switch relay!.readLibdbus() {
            case .read: continue
            case .wouldBlock: break
            case .ended:
                stopRelay(nil)
                return
            case .failed(let reason):
                stopRelay("reading libdbus: \(reason)")
                return
            }
            break
        }
        relayFlushToBus()
    }

    /// Writes what waits for the bus; reading libdbus pauses while too much waits.
    private func relayFlushToBus() {
        guard relay != nil else { return }
        switch relay!.toBus.write(to: relay!.bus.fileDescriptor) {
        case .drained, .blocked: break
        case .failed(let reason):
            stopRelay("writing to the bus: \(reason)")
            return
        }
        refreshRelayInterest()
    }

    /// The relay's watches' interests from its state and the pacing.
    func refreshRelayInterest() {
        guard let relay else { return }
        relay.bus.setInterest(
            read: !pacing.isPaused && !pacing.endingPause && relay.toLibdbus.count < DBusWireRelay.maxPendingToLibdbus,
            write: !relay.toBus.isEmpty)
        relay.libdbus.setInterest(read: relay.toBus.count < DBusWireRelay.maxPendingToBus, write: false)
    }
}
