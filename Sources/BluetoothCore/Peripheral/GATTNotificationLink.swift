/// One central's notification link of one characteristic (an AcquireNotify socket at BlueZ): the peripheral writes
/// values into it without blocking, and learns when it has room again, when the central confirmed an indication
/// and when the stack let go of it.
package protocol GATTNotificationLink: AnyObject, Sendable {
    /// The central's object path at the stack.
    var device: String? { get }
    /// The most one notification carries (ATT MTU − 3, at most 512 bytes).
    var maximumValueLength: Int { get }
    /// Sends one value (already cut to ``maximumValueLength``) without waiting.
    func send(_ value: [UInt8]) -> GATTLinkSendResult
    /// Starts reporting the link's events to `handler`, synchronously as they happen. Called once.
    func start(_ handler: @escaping @Sendable (GATTNotificationLinkEvent) -> Void)
    /// Lets go of the link (the stack sees it closed); no event follows.
    func close()
}

package enum GATTLinkSendResult: Sendable, Hashable {
    case sent
    /// The stack's side is full: try again after ``GATTNotificationLinkEvent/writable``.
    case full
    /// The link is gone.
    case closed
}

package enum GATTNotificationLinkEvent: Sendable, Hashable {
    /// Room again after a ``GATTLinkSendResult/full``.
    case writable
    /// The central confirmed an indication.
    case confirmed
    /// The stack closed the link (CCC disabled, or the central left).
    case closed
}
