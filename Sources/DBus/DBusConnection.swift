internal import CDBus
import Glibc
package import Logging
package import Polling

/// One private connection to a message bus, driven on a serial `PollLoop`.
///
/// The actor runs on the loop; libdbus's socket watches and timeouts are the loop's watches and timers, and every
/// libdbus call and callback happens on the loop thread, so the C state needs no locks. Only decoded, Sendable
/// values leave the actor.
package actor DBusConnection: LoopActor {
    /// The loop the actor, the socket and the timeouts run on.
    package nonisolated let loop: PollLoop
    package nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    /// The unique name the bus gave this connection, e.g. `:1.42`.
    package nonisolated let uniqueName: String
    nonisolated let logger: Logger

    /// nil once closed.
    var handle: OpaquePointer?
    /// libdbus's watches by address: one or two (reading and writing the socket), checked on every wake-up.
    var watches = ShortTable<UInt, FileWatch>()
    var timeouts: [UInt: LoopTimer] = [:]
    var dispatchScheduled = false
    var nextToken: UInt64 = 1

    var pendingCalls: [UInt64: PendingCall] = [:]
    var subscriptions: [UInt64: SignalSubscription] = [:]
    var taps = SignalTaps()
    var trackedOwners = TrackedOwners()
    let droppedSignals = DBusCounter()
    var pacing = ReadPacing()
    let readPauses = DBusCounter()
    let refusedCalls = DBusCounter()
    let sentCalls = DBusCounter()

    var objects: [String: ExportedObject] = [:]
    var objectManagerRoots: Set<String> = []
    /// When set, exported objects answer only the current owner of this well-known name.
    var exportedObjectsCaller: String?
    /// Incoming calls whose async handler has not answered yet (each message is ref'd until then).
    var awaitingReplies: [UInt64: OpaquePointer] = [:]
    let disconnection = DBusDisconnection()
    /// The bus's socket read by Gattway itself, libdbus behind it (see `DBusWireRelay`); nil when libdbus reads the
    /// bus (an address that is no unix socket, or `DBusReader.libdbus` asked for), and once the relay has ended.
    var relay: DBusWireRelay?
    /// The relay's sockets between opening and `start()`.
    var relaySockets: OpenedConnection.RelaySockets?

    /// Bounds on what this connection lets pile up; beyond them calls fail with `LimitsExceeded`.
    static let maxAsyncHandlersInFlight = 256
    static let maxOutgoingBytes = 16 * 1024 * 1024

    /// Opens a private connection to `bus` and registers it (Hello).
    ///
    /// Opening and registering block, so they run on the connection's loop, never on the cooperative pool.
    ///
    /// `loop`: the loop to run on, when the connection is to share it with another client (the MQTT client that
    /// publishes what this connection receives, so that a signal is read and published in one turn of one
    /// thread); nil for a loop of its own. Whatever else runs on a shared loop holds up this connection.
    ///
    /// `reader`: who reads the bus's socket (see `DBusReader`).
    package static func connect(
        to bus: DBusBus, name: String = "dbus", loop: PollLoop? = nil, reader: DBusReader = .fromEnvironment,
        logger: Logger
    ) async throws -> DBusConnection {
        let loop = try loop ?? PollLoop.forConnection(name)
        let opened: OpenedConnection = try await withCheckedThrowingContinuation { continuation in
            loop.execute {
                continuation.resume(
                    with: Result { () throws(DBusError) in try OpenedConnection.open(bus, reader: reader) })
            }
        }
        let connection = DBusConnection(loop: loop, opened: opened, logger: logger)
        await connection.start()
        logger.debug("dbus.connected", metadata: ["dbus.unique_name": "\(opened.uniqueName)", "dbus.name": "\(name)"])
        return connection
    }

    private init(loop: PollLoop, opened: OpenedConnection, logger: Logger) {
        self.loop = loop
        self.uniqueName = opened.uniqueName
        self.logger = logger
        self.handle = opened.pointer
        self.relaySockets = opened.relay
    }

    /// Whether Gattway reads this connection's bus socket itself (see `DBusWireRelay`), rather than libdbus.
    package var readsTheBusItself: Bool { relay != nil }

    /// Whether the connection is open and the bus has not gone away.
    package var isConnected: Bool {
        guard let handle else { return false }
        return dbus_connection_get_is_connected(handle) != 0
    }

    /// Returns once the connection has ended, by `close()` or because the bus went away (or when cancelled).
    package nonisolated func waitUntilDisconnected() async {
        await disconnection.wait()
    }

    /// Signals dropped by all of this connection's streams because their buffers were full.
    package nonisolated var droppedSignalCount: Int { droppedSignals.value }

    /// Method calls this connection sent (each awaiting its reply).
    package nonisolated var sentCallCount: Int { sentCalls.value }

    /// Calls to exported objects refused because the caller was not the one allowed (see
    /// `restrictExportedObjects(toOwnerOf:)`).
    package nonisolated var refusedCallCount: Int { refusedCalls.value }

    /// Closes the connection: pending calls fail with `Disconnected`, signal streams end, exports vanish.
    package func close() {
        guard let c = handle else { return }
        handle = nil
        // Remove our callbacks first: libdbus must not call into this actor once it is gone.
        dbus_connection_remove_filter(c, DBusConnection.filterFunction, Unmanaged.passUnretained(self).toOpaque())
        dbus_connection_set_dispatch_status_function(c, nil, nil, nil)
        dbus_connection_set_watch_functions(c, nil, nil, nil, nil, nil)
        dbus_connection_set_timeout_functions(c, nil, nil, nil, nil, nil)
        failEverything(DBusError.notConnected("close()"))
        pacing.resumeTimer?.cancel()
        pacing.resumeTimer = nil
        stopRelay(nil)
        if let sockets = relaySockets {
            relaySockets = nil
            Glibc.close(sockets.bus)
            Glibc.close(sockets.libdbus)
        }
        dbus_connection_close(c)
        dbus_connection_unref(c)
        logger.debug("dbus.closed", metadata: ["dbus.unique_name": "\(uniqueName)"])
    }

    isolated deinit {
        close()
    }

    /// Ends every stream and waiter and fails every pending call; used on close and on loss of the bus.
    func failEverything(_ error: DBusError) {
        for (_, call) in pendingCalls {
            if let pending = call.pending {
                dbus_pending_call_cancel(pending)
                dbus_pending_call_unref(pending)
            }
            call.box.resume(.failure(error))
        }
        pendingCalls.removeAll()
        for (_, subscription) in subscriptions { subscription.continuation.finish() }
        subscriptions.removeAll()
        taps.removeAll()
        trackedOwners.removeAll()
        for (_, message) in awaitingReplies { dbus_message_unref(message) }
        awaitingReplies.removeAll()
        disconnection.end()
    }

    func makeToken() -> UInt64 {
        defer { nextToken += 1 }
        return nextToken
    }

    /// The open handle, or a `Disconnected` error naming what needed it.
    func requireHandle(_ what: String) throws(DBusError) -> OpaquePointer {
        guard let handle, dbus_connection_get_is_connected(handle) != 0 else { throw .notConnected(what) }
        return handle
    }

    /// Queues `message` for sending, refusing when libdbus's outgoing queue (unbounded itself) is over our bound.
    func send(_ message: OpaquePointer, _ what: String) throws(DBusError) {
        let c = try requireHandle(what)
        if dbus_connection_get_outgoing_size(c) > DBusConnection.maxOutgoingBytes {
            throw DBusError(
                name: DBusError.limitsExceeded,
                message:
                    "\(what): more than \(DBusConnection.maxOutgoingBytes) bytes are waiting to be written to the bus")
        }
        guard dbus_connection_send(c, message, nil) != 0 else {
            throw DBusError(name: DBusError.noMemory, message: "\(what): libdbus could not queue the message")
        }
        relayPumpFromLibdbus()
    }
}

/// A connection opened and registered on the connection's loop, on its way to the actor.
///
/// `@unchecked Sendable`: the pointer is handed over exactly once, from the loop that opened it to the actor
/// that runs on the same loop, and libdbus connections are thread-safe anyway.
final class OpenedConnection: @unchecked Sendable {
    let pointer: OpaquePointer
    let uniqueName: String
    let relay: RelaySockets?

    /// The relay's two sockets (see `DBusWireRelay`) and what the bus sent after Hello's reply.
    struct RelaySockets {
        let bus: Int32
        let libdbus: Int32
        let leftover: [UInt8]
    }

    private init(pointer: OpaquePointer, uniqueName: String, relay: RelaySockets? = nil) {
        self.pointer = pointer
        self.uniqueName = uniqueName
        self.relay = relay
    }

    /// Blocking: opens and registers. Call only on the connection's loop.
    static func open(_ bus: DBusBus, reader: DBusReader) throws(DBusError) -> OpenedConnection {
        if reader == .gattway, let address = DBusUnixAddress.of(bus) { return try openRelayed(bus, at: address) }
        return try openThroughLibdbus(bus)
    }

    /// Blocking: registers with the bus itself and puts libdbus behind a relay.
    private static func openRelayed(_ bus: DBusBus, at address: DBusUnixAddress) throws(DBusError) -> OpenedConnection {
        let description: String
        switch bus {
        case .system: description = "the system bus"
        case .address(let text): description = "the bus at \(text)"
        }
        let registered = try DBusWireHandshake.register(at: address, description: description)
        do {
            let (connection, libdbusSocket) = try DBusWireHandshake.openLibdbus(
                for: registered, description: description)
            return OpenedConnection(
                pointer: connection, uniqueName: registered.uniqueName,
                relay: RelaySockets(bus: registered.socket, libdbus: libdbusSocket, leftover: registered.leftover))
        } catch {
            close(registered.socket)
            throw error
        }
    }

    /// Blocking: libdbus opens and registers.
    private static func openThroughLibdbus(_ bus: DBusBus) throws(DBusError) -> OpenedConnection {
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        let connection: OpaquePointer?
        let description: String
        switch bus {
        case .system:
            description = "the system bus"
            connection = dbus_bus_get_private(DBUS_BUS_SYSTEM, &error)
        case .address(let address):
            description = "the bus at \(address)"
            connection = dbus_connection_open_private(address, &error)
            if let connection, dbus_bus_register(connection, &error) == 0 {
                dbus_connection_close(connection)
                dbus_connection_unref(connection)
                throw failure(&error, "cannot register with \(description)")
            }
        }
        guard let connection else { throw failure(&error, "cannot connect to \(description)") }
        // dbus_bus_get_private would otherwise call _exit() when the bus goes away.
        dbus_connection_set_exit_on_disconnect(connection, 0)
        guard let name = dbus_bus_get_unique_name(connection) else {
            dbus_connection_close(connection)
            dbus_connection_unref(connection)
            throw DBusError(name: DBusError.failed, message: "\(description) gave no unique name")
        }
        return OpenedConnection(pointer: connection, uniqueName: String(cString: name))
    }

    private static func failure(_ error: inout CDBus.DBusError, _ context: String) -> DBusError {
        if dbus_error_is_set(&error) != 0 {
            let name = error.name.map { String(cString: $0) } ?? DBusError.failed
            let message = error.message.map { String(cString: $0) } ?? ""
            return DBusError(name: name, message: "\(context): \(message)")
        }
        return DBusError(name: DBusError.failed, message: context)
    }
}

extension PollLoop {
    /// A loop of the connection's own, its failure to start as a `DBusError`.
    fileprivate static func forConnection(_ name: String) throws(DBusError) -> PollLoop {
        do {
            return try PollLoop(name: "dbus.\(name)")
        } catch {
            throw DBusError(name: DBusError.failed, message: "cannot start the loop of connection \(name): \(error)")
        }
    }
}
