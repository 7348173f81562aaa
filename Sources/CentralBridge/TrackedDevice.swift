import BluetoothCore
import BridgeCore
import DequeModule
import MQTTCore

/// A peripheral the bridge has matched to a configured device and looks after.
struct TrackedDevice: Sendable {
    let path: String
    let address: BluetoothAddress
    var configIndex: Int
    let topic: String
    var routes: [CharacteristicRoute]
    let policy: DeviceConfiguration.ConnectPolicy

    /// The device's own task's inbox: its link loop, command worker and timers run there as its children, so
    /// letting the device go (finishing the inbox) ends all of them.
    var inbox: AsyncStream<CentralBridge.Job>.Continuation?
    /// Whether a link loop (connect, subscribe, wait, reconnect) is running for it.
    var linkRunning = false
    /// Availability as last published.
    var online = false
    /// Notification sockets held while connected (AcquireNotify).
    var sockets: [any BLENotificationChannel] = []
    /// Notification sockets bluetoothd closed during this connection (see `CentralBridge.maxNotifyHangUps`).
    var notifyHangUps = 0
    /// Incremented whenever the sockets are closed, so that a hang-up reported for an earlier set is ignored.
    var socketGeneration = 0
    /// Commands waiting for their turn: one GATT operation at a time per device.
    /// Commands of this device: one in flight, the rest waiting their turn until their deadline (set from the
    /// configured timeouts when the device is tracked).
    var commands = DeviceCommandQueue<PendingCommand, BridgeClock.Instant>(
        capacity: CentralBridge.maxQueuedCommandsPerDevice, commandTimeout: .seconds(30))
    /// Whether a command of this device is running.
    var commandWorkerRunning: Bool { commands.inFlight != nil }
    /// When the last command ran (set to the bridge clock's now when the device is tracked).
    var lastActivity = BridgeClock.Instant(offset: .zero)
    /// Why Gattway is disconnecting the device itself (`idle_timeout`, `requested`, `stopping`); a loss without
    /// one is reported as `link_lost`.
    var disconnectReason: String?
    /// The device's own name, read from its GAP Device Name (0x2A00) once connected; advertisements may say another.
    var deviceName: String?
    /// When bluetoothd last reported the device (an advertisement, an RSSI); for passive devices as of the last
    /// `syncAdverts()` (their advert state is the `AdvertPublisher`'s).
    var lastHeard = BridgeClock.Instant(offset: .zero)
}

/// A `/set` or `/get` (or a bridge request needing the device) waiting for the device.
struct PendingCommand: Sendable {
    enum Kind: Sendable {
        case write([UInt8])
        case read
    }

    let kind: Kind
    let route: Int
    let transaction: JSONValue?
    let responseTopic: String?
    let correlationData: [UInt8]?
}

/// A device-related failure reported back on MQTT: the BlueZ error name where there is one, else Gattway's own.
struct CommandFailure: Error, Sendable {
    let name: String
    let message: String

    static func gattway(_ code: String, _ message: String) -> CommandFailure {
        CommandFailure(name: "gattway.Error.\(code)", message: message)
    }
}
