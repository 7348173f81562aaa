/// The validated configuration: every value typed, every default applied.
package struct BridgeConfiguration: Sendable, Hashable {
    /// Log levels, as swift-log names them.
    package enum LogLevel: String, Sendable, Hashable, CaseIterable {
        case trace, debug, info, notice, warning, error, critical
    }

    package var mqtt: MQTTSettings
    package var bluetooth: BluetoothSettings
    package var devices: [DeviceConfiguration]
    package var peripheral: PeripheralConfiguration?
    /// Nil: no Home Assistant discovery.
    package var homeAssistant: HomeAssistantSettings?
    package var stateDirectory: String
    package var logLevel: LogLevel
}
