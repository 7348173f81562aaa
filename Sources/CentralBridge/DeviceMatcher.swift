import BluetoothCore
import BridgeCore

/// Decides which configured device, if any, a device BlueZ reports is.
enum DeviceMatcher {
    /// The index of the first configured device that `device` matches.
    static func configuredIndex(of device: BLEDeviceState, in devices: [DeviceConfiguration]) -> Int? {
        devices.firstIndex { matches(device, $0.selector) }
    }

    static func matches(_ device: BLEDeviceState, _ selector: DeviceConfiguration.Selector) -> Bool {
        switch selector {
        case .address(let address):
            return device.address == address
        case .match(let namePrefix, let service, let manufacturerID):
            if let namePrefix {
                let name = device.name ?? device.alias ?? ""
                guard name.hasPrefix(namePrefix) else { return false }
            }
            if let service {
                let advertised =
                    device.uuids.compactMap { BluetoothUUID($0) }
                    + device.serviceData.keys.compactMap { BluetoothUUID($0) }
                guard advertised.contains(service) else { return false }
            }
            if let manufacturerID {
                guard device.manufacturerData[manufacturerID] != nil else { return false }
            }
            return true
        }
    }
}
