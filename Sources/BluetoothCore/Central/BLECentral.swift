package import Polling

/// The Bluetooth central as the central bridge uses it: the port between the bridge and the stack.
///
/// `BlueZ.BlueZCentral` is the production conformer, `BridgeTesting.FakeBLECentral` the one for unit tests.
/// Objects (adapters, devices, characteristics) are named by their path at the stack. Errors are `BlueZError`.
/// Values have two synchronous paths that avoid a hop per value: notification channels (`acquireNotify`) deliver
/// batches on a queue the caller picks, and values the stack announces by themselves (StartNotify, read echoes) go
/// to the sink given to `setValueSink`. Advertisement reports have the same kind of path (`setAdvertSink`).
package protocol BLECentral: AnyObject, Sendable {
    /// The stack's objects: a snapshot whenever it is (again) present, then every change. Single consumer. It ends
    /// when the link to the stack is gone for good (the bridge then stops) or the consuming task is cancelled.
    func events() -> AsyncStream<BLECentralEvent>

    /// Hands every value the stack announces by itself to `sink`, synchronously as it arrives; when `sink` returns
    /// true the value is taken and `events()` does not carry it.
    func setValueSink(_ sink: @escaping @Sendable (_ characteristic: String, _ value: [UInt8]) -> Bool) async throws

    /// Hands every advertisement report of a device that carries only advertised data (RSSI, tx power,
    /// manufacturer and service data) to `sink`, synchronously as it arrives; when `sink` returns true the report
    /// is taken and `events()` does not carry it, when it returns false it comes through `events()` as usual.
    ///
    /// Returns a timer on the thread that calls `sink`, for what a report defers (nil when the central has no such
    /// thread: the caller then defers with timers of its own).
    func setAdvertSink(
        _ sink: @escaping @Sendable (_ device: String, _ properties: [BLEDeviceProperty]) -> Bool
    ) async throws -> BLESinkTimer?

    /// Lets the stack batch advertisement reports: while nothing else arrives (no reply, no value, no other
    /// event), it may gather what arrives over `interval` and hand it on at once, which costs far less per report
    /// than waking for each. nil hands each report on as it arrives.
    func paceAdverts(every interval: Duration?) async

    func startDiscovery(adapter: String, filter: BLEDiscoveryFilter) async throws
    func stopDiscovery(adapter: String) async throws
    /// Forgets a device (and its keys) at the stack.
    func removeDevice(adapter: String, device: String) async throws

    func connect(device: String, timeout: Duration) async throws
    func disconnect(device: String, timeout: Duration) async throws

    func readValue(characteristic: String, timeout: Duration) async throws -> [UInt8]
    func writeValue(characteristic: String, _ value: [UInt8], withResponse: Bool, timeout: Duration) async throws

    /// Subscribes with values announced to the value sink.
    func startNotify(characteristic: String, timeout: Duration) async throws

    /// Subscribes with a channel of its own: `onBatch` gets the values on `loop` (return false to pause reading
    /// until `resume()`), `onClose` is told whether the stack ended the channel (true) or `close()` did (false).
    func acquireNotify(
        characteristic: String, timeout: Duration, loop: PollLoop,
        onBatch: @escaping @Sendable ([[UInt8]]) -> Bool, onClose: @escaping @Sendable (_ byPeer: Bool) -> Void
    ) async throws -> any BLENotificationChannel

    /// Pairs and bonds with `device`, answering the stack's questions with `passkey` and showing what it asks to
    /// show (a passkey to type, a number to compare) through `prompt`.
    func pair(
        device: String, passkey: UInt32?, timeout: Duration, prompt: @escaping @Sendable (String) -> Void
    ) async throws
    func cancelPairing(device: String, timeout: Duration) async throws
}

/// Runs work once, after a delay, on the thread that calls a sink: what a sink defers (the end of a publishing
/// interval) then runs where the sink runs, and waking another thread for it (and hopping back) costs nothing.
package struct BLESinkTimer: Sendable {
    private let schedule: @Sendable (Duration, @escaping @Sendable () -> Void) -> Void

    package init(_ schedule: @escaping @Sendable (_ after: Duration, _ work: @escaping @Sendable () -> Void) -> Void) {
        self.schedule = schedule
    }

    /// Runs `work` once after `delay`; it cannot be cancelled, so `work` checks that it is still wanted.
    package func execute(after delay: Duration, _ work: @escaping @Sendable () -> Void) {
        schedule(delay, work)
    }
}

/// One characteristic's notification channel (an AcquireNotify socket).
package protocol BLENotificationChannel: AnyObject, Sendable {
    var isClosed: Bool { get }
    /// Reading starts again after `onBatch` returned false.
    func resume()
    func close()
}

/// Which advertisements discovery reports.
package struct BLEDiscoveryFilter: Sendable, Hashable {
    package var uuids: [String] = []
    package var rssi: Int16?
    package var pathloss: UInt16?
    package var transport: String = "le"
    package var duplicateData = false
    package var pattern: String?

    package init(
        uuids: [String] = [], rssi: Int16? = nil, pathloss: UInt16? = nil, transport: String = "le",
        duplicateData: Bool = false, pattern: String? = nil
    ) {
        self.uuids = uuids
        self.rssi = rssi
        self.pathloss = pathloss
        self.transport = transport
        self.duplicateData = duplicateData
        self.pattern = pattern
    }
}
