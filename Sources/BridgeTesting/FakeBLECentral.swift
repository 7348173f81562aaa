package import BluetoothCore
import Dispatch
import Synchronization

/// A Bluetooth central in memory, conforming to the central bridge's `BLECentral` port.
///
/// The test describes devices (`FakePeripheral`), makes them advertise, scripts how operations end
/// (`connectBehaviour`, `acquireRefused`, `readValues`) and drives the radio: `notify` sends a value on whichever
/// path the bridge subscribed with, `dropLink` ends a connection from the device's side. Every operation the bridge
/// asks for is recorded in `operations`, which tests wait on. Each instance is independent.
package final class FakeBLECentral: BLECentral {
    /// How a `connect` ends.
    package enum ConnectBehaviour: Sendable {
        /// Connects, resolves the device's services and reports them.
        case succeed
        /// Replies with this error.
        case fail(BlueZError)
        /// Never replies: the call returns only when the caller gives up (cancellation) or `releaseHungConnects`.
        case hang
    }

    /// What the bridge asked the central to do.
    package enum Operation: Sendable, Equatable {
        case startDiscovery, stopDiscovery
        case connect(String)
        case disconnect(String)
        case removeDevice(String)
        /// A `connect` that hung was given up by its caller (its task was cancelled).
        case connectCancelled(String)
        case read(String)
        case write(String, [UInt8], withResponse: Bool)
        case startNotify(String)
        case acquireNotify(String)
        case pair(String)
        case cancelPairing(String)
    }

    package let adapterPath: String
    package let operations = RecordedLog<Operation>()

    struct State {
        var peripherals: [String: FakePeripheral] = [:]
        var connectBehaviour: [String: ConnectBehaviour] = [:]
        var hungConnects: [UInt64: CheckedContinuation<Void, any Error>] = [:]
        var nextHangID: UInt64 = 0
        var acquireRefused: Set<String> = []
        var channels: [String: FakeNotificationChannel] = [:]
        var startNotified: Set<String> = []
        var readValues: [String: [UInt8]] = [:]
        var valueSink: (@Sendable (String, [UInt8]) -> Bool)?
        var advertSink: (@Sendable (String, [BLEDeviceProperty]) -> Bool)?
        /// What the bridge asked `paceAdverts` for, in order.
        var advertPacingRequests: [Duration?] = []
        var connected: Set<String> = []
    }

    let state = Mutex(State())
    let eventStream: AsyncStream<BLECentralEvent>
    let eventContinuation: AsyncStream<BLECentralEvent>.Continuation

    package init(adapter: String = "hci0") {
        adapterPath = "/org/bluez/" + adapter
        // Unbounded: a test's handful of events must all arrive, as bluetoothd's signals would.
        (eventStream, eventContinuation) = AsyncStream.makeStream(of: BLECentralEvent.self)
        eventContinuation.yield(
            .snapshot([
                BLEObject(
                    path: adapterPath,
                    interfaces: BLEInterfaces(adapter: [.powered(true), .address("00:00:00:00:00:00")]))
            ]))
    }

    // MARK: - Driven by the test

    /// Sets how `connect` ends for `device` (default: `.succeed`).
    package func setConnectBehaviour(_ behaviour: ConnectBehaviour, for device: FakePeripheral) {
        state.withLock { $0.connectBehaviour[device.path] = behaviour }
    }

    /// Makes `acquireNotify` fail for every characteristic, so the bridge falls back to StartNotify.
    package func refuseAcquireNotify(of device: FakePeripheral) {
        state.withLock { state in
            for characteristic in device.characteristics { state.acquireRefused.insert(characteristic.path) }
        }
    }

    /// What a read of `uuid` of `device` returns.
    package func setReadValue(_ value: [UInt8], of device: FakePeripheral, _ uuid: BluetoothUUID) {
        let path = device.characteristic(uuid).path
        state.withLock { $0.readValues[path] = value }
    }

    /// The device advertises (appearing on first call), with `rssi`. Returns whether the bridge's advert sink took
    /// the report (the D-Bus loop's path) rather than it becoming an event.
    @discardableResult
    package func advertise(_ device: FakePeripheral, rssi: Int16 = -60) -> Bool {
        let (known, sink) = state.withLock { state in
            defer { state.peripherals[device.path] = device }
            return (state.peripherals[device.path] != nil, state.advertSink)
        }
        if known {
            // Like bluetoothd's reports through the D-Bus tap: the sink may take it, else it is an event.
            guard sink?(device.path, [.rssi(rssi)]) != true else { return true }
            eventContinuation.yield(.deviceChanged(path: device.path, [.rssi(rssi)]))
        } else {
            var advertised = device.deviceState
            advertised.rssi = rssi
            eventContinuation.yield(.interfacesAdded(path: device.path, BLEInterfaces(device: advertised)))
        }
        return false
    }

    /// The device ends the connection (out of range, switched off).
    package func dropLink(_ device: FakePeripheral) {
        let wasConnected = state.withLock { state in
            for characteristic in device.characteristics {
                state.startNotified.remove(characteristic.path)
                state.channels.removeValue(forKey: characteristic.path)?.close(byPeer: true)
            }
            return state.connected.remove(device.path) != nil
        }
        if wasConnected {
            eventContinuation.yield(.deviceChanged(path: device.path, [.servicesResolved(false), .connected(false)]))
        }
    }

    /// A notification of `uuid`: on its channel if the bridge acquired one, else to the value sink (StartNotify),
    /// else as a property change. Returns false when the bridge is not subscribed.
    @discardableResult
    package func notify(_ device: FakePeripheral, _ uuid: BluetoothUUID, _ value: [UInt8]) -> Bool {
        let path = device.characteristic(uuid).path
        let (channel, sink, notifying) = state.withLock {
            ($0.channels[path], $0.valueSink, $0.startNotified.contains(path))
        }
        if let channel { return channel.deliver([value]) }
        guard notifying else { return false }
        if sink?(path, value) != true {
            eventContinuation.yield(.characteristicChanged(path: path, [.value(value)]))
        }
        return true
    }

    /// Ends every `connect` that hangs with `org.bluez.Error.Failed`.
    package func releaseHungConnects() {
        let hung = state.withLock { state in
            defer { state.hungConnects = [:] }
            return Array(state.hungConnects.values)
        }
        for continuation in hung { continuation.resume(throwing: BlueZError(.failed, "released by the test")) }
    }

    /// Whether the bridge holds an AcquireNotify channel of `uuid`.
    package func hasChannel(_ device: FakePeripheral, _ uuid: BluetoothUUID) -> Bool {
        let path = device.characteristic(uuid).path
        return state.withLock { $0.channels[path] != nil }
    }
}

extension FakeBLECentral {
    /// The intervals the bridge passed to `paceAdverts`, in order (nil: pacing off).
    package var advertPacingRequests: [Duration?] { state.withLock { $0.advertPacingRequests } }
}
