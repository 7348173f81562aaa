package import BluetoothCore

/// A remote device as `FakeBLECentral` presents it: its address, advertised name and GATT services.
package struct FakePeripheral: Sendable, Hashable {
    package struct Characteristic: Sendable, Hashable {
        package let path: String
        package let service: BluetoothUUID
        package let uuid: BluetoothUUID
        package let flags: [String]
    }

    package let path: String
    package let address: BluetoothAddress
    package let name: String?
    package let characteristics: [Characteristic]
    /// Service path → UUID.
    let services: [String: BluetoothUUID]

    /// - Parameter services: each service's UUID with its characteristics' UUIDs and flags.
    package init(
        address: String, name: String? = nil, adapter: String = "hci0",
        services: [(BluetoothUUID, [(BluetoothUUID, [String])])] = []
    ) {
        let address = BluetoothAddress(address)!  // a test's own constant
        self.address = address
        self.name = name
        path = "/org/bluez/\(adapter)/\(address.bluezPathComponent)"
        var characteristics: [Characteristic] = []
        var servicePaths: [String: BluetoothUUID] = [:]
        var handle = 0x10
        for (service, members) in services {
            let servicePath = path + "/service" + hex4(handle)
            servicePaths[servicePath] = service
            handle += 1
            for (uuid, flags) in members {
                characteristics.append(
                    Characteristic(
                        path: servicePath + "/char" + hex4(handle), service: service, uuid: uuid, flags: flags))
                handle += 2
            }
        }
        self.characteristics = characteristics
        self.services = servicePaths
    }

    package func characteristic(_ uuid: BluetoothUUID) -> Characteristic {
        guard let found = characteristics.first(where: { $0.uuid == uuid }) else {
            preconditionFailure("\(name ?? path) has no characteristic \(uuid)")
        }
        return found
    }

    /// The device as discovery reports it.
    var deviceState: BLEDeviceState {
        var state = BLEDeviceState(path: path, properties: [.address(address), .addressType("public"), .name(name)])
        if let name { state.alias = name }
        return state
    }

    /// The GATT objects reported once services are resolved.
    var gattObjects: [BLEObject] {
        services.map { BLEObject(path: $0.key, interfaces: BLEInterfaces(serviceUUID: $0.value)) }
            + characteristics.map { characteristic in
                BLEObject(
                    path: characteristic.path,
                    interfaces: BLEInterfaces(
                        characteristic: BLECharacteristicState(
                            path: characteristic.path, uuid: characteristic.uuid,
                            servicePath: BLECharacteristicState.parentPath(of: characteristic.path),
                            flags: characteristic.flags)))
            }
    }

    package static func == (lhs: FakePeripheral, rhs: FakePeripheral) -> Bool { lhs.path == rhs.path }
    package func hash(into hasher: inout Hasher) { hasher.combine(path) }
}

/// Four lower-case hex digits, as BlueZ names GATT objects (`service0010`, `char0011`).
private func hex4(_ value: Int) -> String { Hex.padded(UInt64(value), digits: 4) }
