import Metrics

/// The central bridge's counters (swift-metrics; the backend is chosen in main).
///
/// A class: the value relay hands it on for every notification, and a struct of ten counters cost ten retains and
/// ten releases each time.
final class CentralMetrics: Sendable {
    let notifications = Counter(label: "gattway.central.notifications")
    let notificationsDropped = Counter(label: "gattway.central.notifications.dropped")
    let decodeFailures = Counter(label: "gattway.central.decode_failures")
    let notifySocketHangUps = Counter(label: "gattway.central.notify_socket_hangups")
    let connects = Counter(label: "gattway.central.connects")
    let disconnects = Counter(label: "gattway.central.disconnects")
    let inProgressRetries = Counter(label: "gattway.central.inprogress_retries")
    let commands = Counter(label: "gattway.central.commands")
    let commandFailures = Counter(label: "gattway.central.command_failures")
    let rejectedCommands = Counter(label: "gattway.central.rejected_commands")
}
