internal import CDBus
import Polling
import Synchronization

/// Resumes one method call's continuation exactly once: from libdbus's pending-call notify, from cancellation,
/// or from close. Retained once for libdbus in `call(…)` and released by libdbus's free function.
final class PendingCallBox: Sendable {
    private let continuation: Mutex<CheckedContinuation<[DBusValue], any Error>?>

    init(_ continuation: CheckedContinuation<[DBusValue], any Error>) {
        self.continuation = Mutex(continuation)
    }

    func resume(_ result: Result<[DBusValue], any Error>) {
        continuation.withLock { $0.take() }?.resume(with: result)
    }
}

/// A method call waiting for its reply.
struct PendingCall {
    /// nil when libdbus gave no pending call (it was disconnected while sending).
    var pending: OpaquePointer?
    var box: PendingCallBox
}

extension DBusConnection {
    /// Calls a method and returns the reply's arguments.
    ///
    /// Fails with the peer's error name and message; with `org.freedesktop.DBus.Error.NoReply` when no reply came
    /// within `timeout`; with `CancellationError` when the task is cancelled (the pending call is cancelled too).
    package func call(
        destination: String, path: String, interface: String, method: String, arguments: [DBusValue] = [],
        timeout: Duration = .seconds(25)
    ) async throws -> [DBusValue] {
        try Task.checkCancellation()
        let message = try makeMethodCall(destination, path, interface, method, arguments)
        defer { dbus_message_unref(message) }
        let what = "\(interface).\(method) on \(destination) \(path)"
        let c = try requireHandle(what)
        let token = makeToken()
        let milliseconds = Int32(
            clamping: timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        defer { finishCall(token) }  // also on an error reply, a timeout or cancellation
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let box = PendingCallBox(continuation)
                var pending: OpaquePointer?
                guard dbus_connection_send_with_reply(c, message, &pending, max(1, milliseconds)) != 0 else {
                    box.resume(
                        .failure(DBusError(name: DBusError.noMemory, message: "\(what): libdbus could not send")))
                    return
                }
                guard let pending else {
                    // libdbus returns no pending call when the connection is already closed.
                    box.resume(.failure(DBusError.notConnected(what)))
                    return
                }
                pendingCalls[token] = PendingCall(pending: pending, box: box)
                sentCalls.increment()
                if pacing.interval != nil { noteCallSent() }
                // No dispatch can run between send and set_notify: both happen in this turn of our loop.
                dbus_pending_call_set_notify(
                    pending,
                    { pending, context in
                        let box = Unmanaged<PendingCallBox>.fromOpaque(context!).takeUnretainedValue()
                        guard let reply = dbus_pending_call_steal_reply(pending) else {
                            box.resume(.failure(DBusError(name: DBusError.noReply, message: "no reply received")))
                            return
                        }
                        defer { dbus_message_unref(reply) }
                        box.resume(DBusConnection.decodeReply(reply))
                    },
                    Unmanaged.passRetained(box).toOpaque(),  // released by the free function below
                    { context in Unmanaged<PendingCallBox>.fromOpaque(context!).release() })
                // The call leaves in this turn (reading what libdbus wrote dispatches nothing).
                relayPumpFromLibdbus()
            }
        } onCancel: { [weak self] in
            self?.loop.execute { [weak self] in
                self?.loopIsolated { $0.cancelCall(token) }
            }
        }
    }

    private func finishCall(_ token: UInt64) {
        if let call = pendingCalls.removeValue(forKey: token), let pending = call.pending {
            dbus_pending_call_unref(pending)
        }
    }

    private func cancelCall(_ token: UInt64) {
        guard let call = pendingCalls.removeValue(forKey: token) else { return }
        if let pending = call.pending {
            dbus_pending_call_cancel(pending)
            dbus_pending_call_unref(pending)
        }
        call.box.resume(.failure(CancellationError()))
    }

    /// Sends a method call without waiting for (or wanting) a reply.
    package func send(
        destination: String, path: String, interface: String, method: String, arguments: [DBusValue] = []
    ) throws {
        let message = try makeMethodCall(destination, path, interface, method, arguments)
        defer { dbus_message_unref(message) }
        dbus_message_set_no_reply(message, 1)
        try send(message, "\(interface).\(method) on \(destination) \(path)")
    }

    /// Emits a signal from `path`. Throws when disconnected or when the outgoing queue is over its bound.
    package func emitSignal(path: String, interface: String, name: String, arguments: [DBusValue] = []) throws {
        try DBusNameCheck.objectPath(path)
        try DBusNameCheck.interface(interface)
        try DBusNameCheck.member(name)
        guard let message = dbus_message_new_signal(path, interface, name) else {
            throw DBusError(name: DBusError.noMemory, message: "cannot create signal \(interface).\(name)")
        }
        defer { dbus_message_unref(message) }
        try DBusMessageWriter.append(arguments, to: message)
        try send(message, "signal \(interface).\(name) from \(path)")
    }

    /// Calls a method of the bus itself (org.freedesktop.DBus).
    func callBus(_ method: String, _ arguments: [DBusValue] = []) async throws -> [DBusValue] {
        try await call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            method: method, arguments: arguments)
    }

    private func makeMethodCall(
        _ destination: String, _ path: String, _ interface: String, _ method: String, _ arguments: [DBusValue]
    ) throws(DBusError) -> OpaquePointer {
        try DBusNameCheck.busName(destination)
        try DBusNameCheck.objectPath(path)
        try DBusNameCheck.interface(interface)
        try DBusNameCheck.member(method)
        guard let message = dbus_message_new_method_call(destination, path, interface, method) else {
            throw DBusError(name: DBusError.noMemory, message: "cannot create a call to \(interface).\(method)")
        }
        do {
            try DBusMessageWriter.append(arguments, to: message)
        } catch {
            dbus_message_unref(message)
            throw error
        }
        return message
    }

    static func decodeReply(_ reply: OpaquePointer) -> Result<[DBusValue], any Error> {
        if dbus_message_get_type(reply) == DBusMessageKind.error {
            let name = string(dbus_message_get_error_name(reply)) ?? DBusError.failed
            return .failure(DBusError(name: name, message: DBusMessageReader.firstString(of: reply) ?? ""))
        }
        return .success(DBusMessageReader.arguments(of: reply))
    }
}
