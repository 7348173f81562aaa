package import Polling

/// The Bluetooth stack as the local peripheral uses it: the port between the peripheral bridge and BlueZ.
///
/// `BlueZ.BlueZGATTServer` is the production conformer, `BridgeTesting.FakeGATTServer` the one for unit tests.
/// Characteristics are named by their id (declaration order across services, ``GATTLocalApplication``); centrals by
/// their object path at the stack. Errors are `BlueZError`.
///
/// Two ways to emit a value exist because the local peripheral's hot path must not hop: `emitValue` is the ordinary
/// awaitable one, while `emitValueOnLoop` is synchronous and runs on `emitLoop`, where the peripheral's MQTT client
/// may deliver its messages (so that a value is read from the broker and emitted in one turn of one thread).
package protocol GATTServer: AnyObject, Sendable {
    /// Makes the application and the advertisement callable by the stack; calls into them go to `handler`.
    /// Called once, before anything else.
    func export(
        application: GATTLocalApplication, advertisement: GATTAdvertisement, handler: any GATTServerHandler
    ) async throws

    func registerApplication(adapter: String) async throws
    func unregisterApplication(adapter: String) async throws
    func registerAdvertisement(adapter: String) async throws
    func unregisterAdvertisement(adapter: String) async throws

    /// Sends `value` the StartNotify way: the stack notifies (or indicates) every central whose CCC is enabled.
    func emitValue(characteristic: Int, _ value: [UInt8]) async throws
    /// The loop `emitValueOnLoop` must be called on (the stack connection's), nil when the server has none.
    var emitLoop: PollLoop? { get }
    /// Sends `value` the StartNotify way, as `emitValue` does, from code already running on `emitLoop`, without
    /// suspending.
    ///
    /// - Precondition: called on `emitLoop`.
    func emitValueOnLoop(characteristic: Int, _ value: [UInt8]) throws

    /// Tells the stack whether the StartNotify session of `characteristic` is open (the `Notifying` property).
    func setNotifying(characteristic: Int, _ notifying: Bool) async

    /// Reports the stack's presence and the centrals that leave, synchronously as they happen, until the calling
    /// task is cancelled. The first event says whether the stack is there now.
    func watch(_ onEvent: @escaping @Sendable (GATTServerEvent) -> Void) async throws
}

/// What the stack tells the peripheral without being asked.
package enum GATTServerEvent: Sendable, Hashable {
    /// The stack is (again) present: the application and the advertisement must be registered anew.
    case stackAppeared
    /// The stack went away, and every session it held with it.
    case stackGone
    /// The stack dropped the advertisement by itself (`Release()`).
    case advertisementReleased
    /// A central is no longer connected (its `Connected` went false, or its object was removed).
    case centralDisconnected(device: String)
}

/// What the peripheral does when the stack calls into a local characteristic. An error thrown as `BlueZError`
/// (``GATTServerError``) reaches the remote central as the matching ATT error; anything else as `Failed`.
package protocol GATTServerHandler: Sendable {
    func readValue(characteristic: Int, options: GATTRequestOptions) async throws -> [UInt8]
    func writeValue(characteristic: Int, value: [UInt8], options: GATTRequestOptions) async throws
    /// A central enabled notifications and the stack uses PropertiesChanged(Value) (the StartNotify way).
    func startNotify(characteristic: Int) async throws
    func stopNotify(characteristic: Int) async
    /// A central enabled notifications and the stack wants a link of its own (AcquireNotify): values go into `link`.
    func acquireNotify(characteristic: Int, options: GATTRequestOptions, link: any GATTNotificationLink) async throws
    /// The remote confirmed an indication sent the StartNotify way.
    func confirm(characteristic: Int) async
    /// The current value, for the `Value` property (must not block).
    func currentValue(characteristic: Int) -> [UInt8]
}

/// The errors a local attribute answers with, named as bluetoothd maps them to ATT errors.
package enum GATTServerError {
    package static func invalidOffset(_ offset: Int, _ length: Int) -> BlueZError {
        BlueZError(.invalidOffset, "offset \(offset) is past the value's \(length) bytes")
    }

    package static func invalidValueLength(_ length: Int, maximum: Int) -> BlueZError {
        BlueZError(.invalidValueLength, "\(length) bytes is longer than the maximum of \(maximum)")
    }

    /// An application error code 0x80…0x9F travels as `Failed` with the code as its message (the reason is for
    /// the log only: bluetoothd reads the code from the message).
    package static func application(_ code: UInt8, _ reason: String) -> BlueZError {
        BlueZError(.failed, "0x\(String(code, radix: 16))")
    }
}
