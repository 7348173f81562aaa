internal import CDBus
import Dispatch
import Glibc
import Logging

/// libdbus's main-loop integration: watches and timeouts become DispatchSources on the connection's queue,
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
                nonisolated(unsafe) let watch = watch!
                DBusConnection.connection(context).assumeIsolated { $0.updateWatch(watch) }
                return 1
            },
            { watch, context in
                nonisolated(unsafe) let watch = watch!
                DBusConnection.connection(context).assumeIsolated { $0.removeWatch(watch) }
            },
            { watch, context in
                nonisolated(unsafe) let watch = watch!
                DBusConnection.connection(context).assumeIsolated { $0.updateWatch(watch) }
            }, context, nil)
        dbus_connection_set_timeout_functions(
            c,
            { timeout, context in
                nonisolated(unsafe) let timeout = timeout!
                DBusConnection.connection(context).assumeIsolated { $0.updateTimeout(timeout) }
                return 1
            },
            { timeout, context in
                nonisolated(unsafe) let timeout = timeout!
                DBusConnection.connection(context).assumeIsolated { $0.removeTimeout(timeout) }
            },
            { timeout, context in
                nonisolated(unsafe) let timeout = timeout!
                DBusConnection.connection(context).assumeIsolated { $0.updateTimeout(timeout) }
            }, context, nil)
        // Must not dispatch from inside this callback: defer it to the queue.
        dbus_connection_set_dispatch_status_function(
            c,
            { _, status, context in
                if status == DBUS_DISPATCH_DATA_REMAINS {
                    DBusConnection.connection(context).assumeIsolated { $0.scheduleDispatch() }
                }
            }, context, nil)
        dbus_connection_add_filter(c, DBusConnection.filterFunction, context, nil)
        // Messages (NameAcquired, early signals) may already be queued from registration.
        scheduleDispatch()
    }

    static let filterFunction: DBusHandleMessageFunction = { _, message, context in
        nonisolated(unsafe) let message = message!
        return DBusConnection.connection(context).assumeIsolated { $0.filter(message) }
    }

    private func updateWatch(_ watch: OpaquePointer) {
        let key = Self.key(watch)
        for source in watchSources.removeValue(forKey: key) ?? [] { source.cancel() }
        guard dbus_watch_get_enabled(watch) != 0 else {
            watchSources[key] = []
            return
        }
        let fd = dbus_watch_get_unix_fd(watch)
        let flags = dbus_watch_get_flags(watch)
        var sources: [any DispatchSourceProtocol] = []
        // Each source watches a dup() of the socket of its own and closes it in its cancel handler: libdbus closes
        // its fd as soon as the connection ends, while a cancelled source is unregistered later on libdispatch's
        // manager thread. Had the source watched libdbus' number, a connection opened meanwhile could reuse that
        // number and meet the stale registration, which crashes libdispatch.
        if flags & DBUS_WATCH_READABLE.rawValue != 0 {
            let watched = Self.ownDescriptor(of: fd)
            let source = DispatchSource.makeReadSource(fileDescriptor: watched, queue: executor.queue)
            source.setEventHandler { [weak self] in
                self?.assumeIsolated { $0.handleWatch(key, DBUS_WATCH_READABLE.rawValue) }
            }
            if watched != fd { source.setCancelHandler { Glibc.close(watched) } }
            sources.append(source)
        }
        if flags & DBUS_WATCH_WRITABLE.rawValue != 0 {
            let watched = Self.ownDescriptor(of: fd)
            let source = DispatchSource.makeWriteSource(fileDescriptor: watched, queue: executor.queue)
            source.setEventHandler { [weak self] in
                self?.assumeIsolated { $0.handleWatch(key, DBUS_WATCH_WRITABLE.rawValue) }
            }
            if watched != fd { source.setCancelHandler { Glibc.close(watched) } }
            sources.append(source)
        }
        // Activated at once: releasing a never-activated source crashes libdispatch.
        for source in sources { source.activate() }
        watchSources[key] = sources
    }

    /// A duplicate of `fd` for one dispatch source; `fd` itself only when the process is out of descriptors.
    private static func ownDescriptor(of fd: Int32) -> Int32 {
        let duplicate = dup(fd)
        return duplicate >= 0 ? duplicate : fd
    }

    private func removeWatch(_ watch: OpaquePointer) {
        for source in watchSources.removeValue(forKey: Self.key(watch)) ?? [] { source.cancel() }
    }

    private func handleWatch(_ key: UInt, _ flags: UInt32) {
        // A source cancelled in this turn of the queue may still fire once; the watch may be freed by then.
        guard handle != nil, watchSources[key] != nil, let watch = OpaquePointer(bitPattern: key) else { return }
        dbus_watch_handle(watch, flags)
        dispatchAll()
    }

    private func updateTimeout(_ timeout: OpaquePointer) {
        let key = Self.key(timeout)
        timeoutSources.removeValue(forKey: key)?.cancel()
        guard dbus_timeout_get_enabled(timeout) != 0 else { return }
        let interval = DispatchTimeInterval.milliseconds(Int(dbus_timeout_get_interval(timeout)))
        let timer = DispatchSource.makeTimerSource(queue: executor.queue)
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler { [weak self] in
            self?.assumeIsolated { $0.handleTimeout(key) }
        }
        timer.activate()
        timeoutSources[key] = timer
    }

    private func removeTimeout(_ timeout: OpaquePointer) {
        timeoutSources.removeValue(forKey: Self.key(timeout))?.cancel()
    }

    private func handleTimeout(_ key: UInt) {
        guard handle != nil, timeoutSources[key] != nil, let timeout = OpaquePointer(bitPattern: key) else { return }
        dbus_timeout_handle(timeout)
        dispatchAll()
    }

    func scheduleDispatch() {
        guard !dispatchScheduled else { return }
        dispatchScheduled = true
        executor.queue.async { [weak self] in
            self?.assumeIsolated { connection in
                connection.dispatchScheduled = false
                connection.dispatchAll()
            }
        }
    }

    /// Dispatches queued messages; after a batch it yields the queue so calls and timers are not starved.
    func dispatchAll() {
        var remaining = 256
        while let c = handle, dbus_connection_get_dispatch_status(c) == DBUS_DISPATCH_DATA_REMAINS {
            dbus_connection_dispatch(c)
            remaining -= 1
            if remaining == 0 {
                scheduleDispatch()
                return
            }
        }
    }

    /// Every incoming message passes here; replies to our calls were already taken by their pending calls.
    private func filter(_ message: OpaquePointer) -> DBusHandlerResult {
        switch dbus_message_get_type(message) {
        case DBusMessageKind.signal:
            if dbus_message_is_signal(message, "org.freedesktop.DBus.Local", "Disconnected") != 0 {
                logger.debug("dbus.disconnected", metadata: ["dbus.unique_name": "\(uniqueName)"])
                failEverything(DBusError.notConnected("the bus closed the connection"))
                return DBUS_HANDLER_RESULT_HANDLED
            }
            deliverSignal(message)
            return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
        case DBusMessageKind.methodCall:
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
