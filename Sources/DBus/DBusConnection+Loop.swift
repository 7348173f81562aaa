internal import CDBus
import Logging
import Polling

/// libdbus's main-loop integration: watches and timeouts become the watches and timers of the connection's loop,
/// and incoming messages are dispatched there.
extension DBusConnection {
    private static func connection(_ context: UnsafeMutableRawPointer?) -> DBusConnection {
        // Unretained: `close()` removes every callback before the actor can go away.
        Unmanaged<DBusConnection>.fromOpaque(context!).takeUnretainedValue()
    }

    private static func key(_ pointer: OpaquePointer) -> UInt { UInt(bitPattern: Int(bitPattern: pointer)) }

    /// Installs the callbacks; runs once, right after the connection was opened.
    func start() {
        guard let c = handle else { return }
        let context = Unmanaged.passUnretained(self).toOpaque()
        // Watch and timeout callbacks run with the connection lock held: they only manage sources.
        dbus_connection_set_watch_functions(
            c,
            { watch, context in
                DBusConnection.connection(context).loopIsolated(with: watch!) { $0.updateWatch($1) }
                return 1
            },
            { watch, context in
                DBusConnection.connection(context).loopIsolated(with: watch!) { $0.removeWatch($1) }
            },
            { watch, context in
                DBusConnection.connection(context).loopIsolated(with: watch!) { $0.updateWatch($1) }
            }, context, nil)
        dbus_connection_set_timeout_functions(
            c,
            { timeout, context in
                DBusConnection.connection(context).loopIsolated(with: timeout!) { $0.updateTimeout($1) }
                return 1
            },
            { timeout, context in
                DBusConnection.connection(context).loopIsolated(with: timeout!) { $0.removeTimeout($1) }
            },
            { timeout, context in
                DBusConnection.connection(context).loopIsolated(with: timeout!) { $0.updateTimeout($1) }
            }, context, nil)
        // Must not dispatch from inside this callback: defer it to the loop.
        dbus_connection_set_dispatch_status_function(
            c,
            { _, status, context in
                if status == DBUS_DISPATCH_DATA_REMAINS {
                    DBusConnection.connection(context).loopIsolated { $0.scheduleDispatch() }
                }
            }, context, nil)
        dbus_connection_add_filter(c, DBusConnection.filterFunction, context, nil)
        // Messages (NameAcquired, early signals) may already be queued from registration.
        scheduleDispatch()
        if let sockets = relaySockets {
            relaySockets = nil
            startRelay(sockets)
        }
    }

    static let filterFunction: DBusHandleMessageFunction = { _, message, context in
        return DBusConnection.connection(context).loopIsolated(with: message!) { $0.filter($1) }
    }

    private func updateWatch(_ watch: OpaquePointer) {
        let key = Self.key(watch)
        let flags = dbus_watch_get_flags(watch)
        let enabled = dbus_watch_get_enabled(watch) != 0
        if watches[key] == nil {
            do {
                watches[key] = try loop.watch(
                    dbus_watch_get_unix_fd(watch),
                    readable: { [weak self] in
                        self?.loopIsolated(with: key) { $0.handleWatch($1, DBUS_WATCH_READABLE.rawValue) }
                    },
                    writable: { [weak self] in
                        self?.loopIsolated(with: key) { $0.handleWatch($1, DBUS_WATCH_WRITABLE.rawValue) }
                    })
            } catch {
                // Out of descriptors: the connection cannot be served; its calls time out and its owner sees it.
                logger.error("dbus.watch_failed", metadata: ["error": "\(error)"])
                return
            }
        }
        // Behind the relay, libdbus's socket holds only what the relay gave it, and the pacing is the relay's.
        watches[key]?.setInterest(
            read: enabled && flags & DBUS_WATCH_READABLE.rawValue != 0 && (relay != nil || !pacing.isPaused),
            write: enabled && flags & DBUS_WATCH_WRITABLE.rawValue != 0)
    }

    /// Sets every watch's interests again from libdbus's flags and the pacing (see `paceReading`).
    func refreshWatches() {
        for key in watches.keys {
            guard let watch = OpaquePointer(bitPattern: key) else { continue }
            updateWatch(watch)
        }
        refreshRelayInterest()
    }

    private func removeWatch(_ watch: OpaquePointer) {
        watches.removeValue(forKey: Self.key(watch))?.cancel()
    }

    private func handleWatch(_ key: UInt, _ flags: UInt32) {
        // The watch may have been removed by a handler earlier in this turn; then libdbus has freed it.
        guard handle != nil, watches[key] != nil, let watch = OpaquePointer(bitPattern: key) else { return }
        // What a pause gathered is read and dispatched in this turn: writers may hold their output back from the
        // first write (the MQTT client corks its socket).
        let paced = relay == nil && pacing.interval != nil
        if flags == DBUS_WATCH_READABLE.rawValue, paced, pacing.lastPauseEnd > pacing.lastRead {
            loop.expectBurst()
        }
        handleAndDispatch(watch, flags)
        if flags == DBUS_WATCH_READABLE.rawValue, handle != nil, paced { readBatch(.libdbus(key: key, watch: watch)) }
        // What libdbus wrote leaves in the same turn; what it read while behind lets the relay go on.
        if flags == DBUS_WATCH_WRITABLE.rawValue { relayPumpFromLibdbus() }
        if flags == DBUS_WATCH_READABLE.rawValue, relay?.libdbusBehind == true { relayCatchUp() }
    }

    /// Reads and dispatches once more from a readable watch, as `handleWatch` does.
    func readAgain(_ watch: OpaquePointer) {
        handleAndDispatch(watch, DBUS_WATCH_READABLE.rawValue)
    }

    /// Lets libdbus read or write on `watch`, then dispatches what it queued.
    private func handleAndDispatch(_ watch: OpaquePointer, _ flags: UInt32) {
        // What the read queues is dispatched right below, in this turn: the dispatch-status callback that reading
        // triggers need not queue a job for it.
        let wasScheduled = dispatchScheduled
        dispatchScheduled = true
        dbus_watch_handle(watch, flags)
        dispatchScheduled = wasScheduled
        dispatchAll()
    }

    private func updateTimeout(_ timeout: OpaquePointer) {
        let key = Self.key(timeout)
        timeouts.removeValue(forKey: key)?.cancel()
        guard dbus_timeout_get_enabled(timeout) != 0 else { return }
        let interval = Duration.milliseconds(Int(dbus_timeout_get_interval(timeout)))
        timeouts[key] = loop.schedule(after: interval, repeating: interval) { [weak self] in
            self?.loopIsolated { $0.handleTimeout(key) }
        }
    }

    private func removeTimeout(_ timeout: OpaquePointer) {
        timeouts.removeValue(forKey: Self.key(timeout))?.cancel()
    }

    private func handleTimeout(_ key: UInt) {
        guard handle != nil, timeouts[key] != nil, let timeout = OpaquePointer(bitPattern: key) else { return }
        dbus_timeout_handle(timeout)
        dispatchAll()
    }

    func scheduleDispatch() {
        guard !dispatchScheduled else { return }
        dispatchScheduled = true
        loop.execute { [weak self] in
            self?.loopIsolated { connection in
                connection.dispatchScheduled = false
                connection.dispatchAll()
            }
        }
    }

    /// Dispatches queued messages; after a batch it yields the loop so calls and timers are not starved.
    func dispatchAll() {
        guard let c = handle else { return }
        var remaining = 256
        // dbus_connection_dispatch returns the status after its message, so each message costs one status query
        // less. A handler may close the connection, which frees `c`: stop as soon as `handle` is gone.
        var status = dbus_connection_get_dispatch_status(c)
        while status == DBUS_DISPATCH_DATA_REMAINS {
            status = dbus_connection_dispatch(c)
            guard handle != nil else { return }
            remaining -= 1
            if remaining == 0 {
                if status == DBUS_DISPATCH_DATA_REMAINS { scheduleDispatch() }
                return
            }
        }
    }

    /// Every incoming message passes here; replies to our calls were already taken by their pending calls.
    private func filter(_ message: OpaquePointer) -> DBusHandlerResult {
        switch dbus_message_get_type(message) {
        case DBusMessageKind.signal:
            // Its header fields are read once, here, for every rule it meets.
            let fields = DBusMessageFields(message)
            if fields.isSignal("org.freedesktop.DBus.Local", "Disconnected") {
                logger.debug("dbus.disconnected", metadata: ["dbus.unique_name": "\(uniqueName)"])
                failEverything(DBusError.notConnected("the bus closed the connection"))
                return DBUS_HANDLER_RESULT_HANDLED
            }
            deliverSignal(message, fields)
            // Handled: no object path is registered with libdbus (exported objects are served by this filter), so
            // passing a signal on would only make libdbus split its path to find no handler, for every signal.
            return DBUS_HANDLER_RESULT_HANDLED
        case DBusMessageKind.methodCall:
            noteUrgentMessage()
            return handleMethodCall(message)
        default:
            return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
        }
    }
}

extension DBusConnection {
    static func string(_ pointer: UnsafePointer<CChar>?) -> String? {
        pointer.map { String(cString: $0) }
    }
}
