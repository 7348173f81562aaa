import BluetoothCore
import BridgeCore
import Logging
import MQTTCore

extension CentralBridge {
    /// How long a pairing may take: bluetoothd connects first, and a person may have to type a passkey.
    static let pairingTimeout: Duration = .seconds(60)

    /// `{"passkey": 123456}` of a pair request: nil when absent; an error message when it is not a passkey.
    static func passkey(in body: JSONValue) -> Result<UInt32?, CommandFailure> {
        guard let value = body["passkey"] else { return .success(nil) }
        let number = value.doubleValue ?? value.stringValue.flatMap { Double($0) }
        guard let number, number.isFinite, number >= 0, number <= 999_999, number == number.rounded() else {
            return .failure(.gattway("InvalidRequest", "passkey must be a whole number within 0…999999"))
        }
        return .success(UInt32(number))
    }

    /// `bridge/request/pair`: pairs and bonds with a tracked device, answering bluetoothd through an agent that
    /// only bluetoothd may call and only about this device. One pairing at a time.
    func pair(_ path: String, passkey: UInt32?) async throws {
        guard let device = devices[path] else {
            throw CommandFailure.gattway("DeviceUnavailable", "the device is gone")
        }
        guard !pairingInProgress else {
            throw CommandFailure.gattway("Busy", "another pairing is in progress; try again when it has finished")
        }
        pairingInProgress = true
        defer { pairingInProgress = false }
        let topic = device.topic
        // What bluetoothd asks to show (a passkey to type on the device, a number to compare) goes to bridge/event.
        let outbox = self.outbox
        let eventTopic = routes.bridgeEventTopic
        let show: @Sendable (String) -> Void = { message in
            let event = BridgeEvent(type: "pairing_prompt", device: topic, message: message)
            outbox.send(MQTTMessage(topic: eventTopic, payload: event.payload, qos: .atLeastOnce))
        }
        try await central.pair(device: path, passkey: passkey, timeout: Self.pairingTimeout, prompt: show)
        logger.notice("device.paired", metadata: ["device.name": "\(topic)"])
    }

    /// `bridge/request/unpair`: a pairing in progress is cancelled; a paired device is removed from bluetoothd,
    /// which forgets its keys (it is heard, and tracked, again from its next advertisement).
    func unpair(_ path: String) async throws {
        let timeout = configuration.bluetooth.requestTimeout
        if pairingInProgress {
            try await central.cancelPairing(device: path, timeout: timeout)
        } else if tree.devices[path]?.paired ?? false {
            closeSockets(path)
            try await central.removeDevice(adapter: adapterPath, device: path)
        } else {
            throw CommandFailure.gattway("NotPaired", "\(devices[path]?.topic ?? path) is not paired")
        }
    }
}
