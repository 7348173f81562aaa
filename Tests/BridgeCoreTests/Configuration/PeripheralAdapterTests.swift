import BridgeCore
import Testing

/// The local peripheral advertises on the adapter the central bridge uses unless it names its own.
@Suite struct PeripheralAdapterTests {
    private let peripheral = "peripheral: { advertise: { local_name: panel } }"

    @Test func followsTheBluetoothAdapter() throws {
        let config = try BridgeConfiguration(
            yaml: "mqtt: { url: \"mqtt://localhost\" }\nbluetooth: { adapter: hci1 }\n" + peripheral)
        #expect(config.peripheral?.adapter == "hci1")
    }

    @Test func isHci0WhenNeitherSectionNamesOne() throws {
        let config = try BridgeConfiguration(yaml: "mqtt: { url: \"mqtt://localhost\" }\n" + peripheral)
        #expect(config.peripheral?.adapter == "hci0")
    }

    @Test func itsOwnAdapterWins() throws {
        let config = try BridgeConfiguration(
            yaml: "mqtt: { url: \"mqtt://localhost\" }\nbluetooth: { adapter: hci1 }\n"
                + "peripheral: { adapter: hci2, advertise: { local_name: panel } }")
        #expect(config.peripheral?.adapter == "hci2")
        #expect(config.bluetooth.adapter == "hci1")
    }

    @Test func anInvalidBluetoothAdapterIsReportedOnceWhereItIsWritten() {
        #expect {
            _ = try BridgeConfiguration(
                yaml: "mqtt: { url: \"mqtt://localhost\" }\nbluetooth: { adapter: usb0 }\n" + peripheral)
        } throws: { error in
            (error as? ConfigurationErrors)?.errors.map(\.path) == ["bluetooth.adapter"]
        }
    }
}
