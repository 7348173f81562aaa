/// One receiver of a characteristic's notifications: a central's AcquireNotify socket, or bluetoothd's
/// StartNotify session (which fans PropertiesChanged values out to every subscribed central itself).
protocol NotifySubscriber: AnyObject, Sendable {
    var id: Int { get }
    /// The remote device's object path for socket subscribers (nil for the StartNotify session).
    var device: String? { get }
    var hasRoom: Bool { get }
    var isClosed: Bool { get }
    func offer(_ value: [UInt8]) -> NotifyQueue.Offer
    /// The remote confirmed an indication (Confirm() call).
    func confirmed()
    func close()
    var counters: SubscriberCounters { get }
}

struct SubscriberCounters: Sendable {
    var queued = 0
    var notifications = 0
    var indications = 0
    /// Values longer than what one notification carries (MTU−3, at most 512 bytes), sent cut to that length.
    var truncated = 0
}
