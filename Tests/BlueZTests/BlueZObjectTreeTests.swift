import BlueZ
import BluetoothCore
import DBus
import Testing

/// The object tree as pure logic: BlueZ's signals in, changes out, memory bounded.
@Suite struct BlueZObjectTreeTests {
    static func devicePath(_ index: Int) -> String {
        let suffix = String(index, radix: 16, uppercase: true)
        let padded = String(repeating: "0", count: max(0, 2 - suffix.count)) + suffix
        return "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_\(padded)"
    }

    static func deviceProperties(_ index: Int, rssi: Int16 = -60, connected: Bool = false) -> [String: DBusValue] {
        let suffix = String(index, radix: 16, uppercase: true)
        let padded = String(repeating: "0", count: max(0, 2 - suffix.count)) + suffix
        return [
            "Address": .string("AA:BB:CC:DD:EE:\(padded)"), "AddressType": .string("random"),
            "RSSI": .int16(rssi), "Connected": .bool(connected), "ServicesResolved": .bool(false),
            "Alias": .string("dev \(index)"),
            "ManufacturerData": .uint16VariantDictionary([0x004C: .bytes([1, 2, 3])]),
        ]
    }

    @Test func deviceAppearsAndItsAdvertChangesAreReported() {
        var tree = BlueZObjectTree(maxDevices: 10)
        let path = Self.devicePath(1)
        let added = tree.interfacesAdded(path: path, interfaces: [BlueZName.device: Self.deviceProperties(1)])
        #expect(added == [.deviceAppeared(path: path)])
        #expect(tree.devices[path]?.address == BluetoothAddress("AA:BB:CC:DD:EE:01"))
        #expect(tree.devices[path]?.manufacturerData[0x004C] == [1, 2, 3])
        let moved = tree.propertiesChanged(
            path: path, interface: BlueZName.device, changed: ["RSSI": .variant(.int16(-70))], invalidated: [])
        #expect(moved == [.deviceAdvertChanged(path: path)])
        let same = tree.propertiesChanged(
            path: path, interface: BlueZName.device, changed: ["RSSI": .variant(.int16(-70))], invalidated: [])
        #expect(same.isEmpty)
        let gone = tree.propertiesChanged(path: path, interface: BlueZName.device, changed: [:], invalidated: ["RSSI"])
        #expect(gone == [.deviceAdvertChanged(path: path)])
        #expect(tree.devices[path]?.rssi == nil)
    }

    @Test func connectionChangesAreReportedSeparately() {
        var tree = BlueZObjectTree(maxDevices: 10)
        let path = Self.devicePath(2)
        _ = tree.interfacesAdded(path: path, interfaces: [BlueZName.device: Self.deviceProperties(2)])
        let changes = tree.propertiesChanged(
            path: path, interface: BlueZName.device, changed: ["Connected": .variant(.bool(true))], invalidated: [])
        #expect(changes == [.deviceConnectionChanged(path: path)])
    }

    @Test func memoryStaysBoundedByEvictingTheOldestUnpinnedUnconnectedDevices() {
        var tree = BlueZObjectTree(maxDevices: 50)
        let pinned = Self.devicePath(0)
        tree.pinnedDevices.insert(pinned)
        _ = tree.interfacesAdded(path: pinned, interfaces: [BlueZName.device: Self.deviceProperties(0)])
        let connected = Self.devicePath(1)
        _ = tree.interfacesAdded(
            path: connected, interfaces: [BlueZName.device: Self.deviceProperties(1, connected: true)])
        var removed = 0
        for index in 2..<250 {
            let changes = tree.interfacesAdded(
                path: Self.devicePath(index), interfaces: [BlueZName.device: Self.deviceProperties(index)])
            removed += changes.filter { if case .deviceRemoved = $0 { true } else { false } }.count
            #expect(tree.devices.count <= 50)
        }
        #expect(tree.devices[pinned] != nil)
        #expect(tree.devices[connected] != nil)
        #expect(tree.evictedDeviceCount == removed)
        #expect(removed == 250 - 50)
    }

    @Test func characteristicsAreFoundByServiceAndUUIDAndValuesAreReported() {
        var tree = BlueZObjectTree(maxDevices: 10)
        let device = Self.devicePath(3)
        _ = tree.interfacesAdded(path: device, interfaces: [BlueZName.device: Self.deviceProperties(3)])
        let service = device + "/service000a"
        _ = tree.interfacesAdded(
            path: service,
            interfaces: [BlueZName.gattService: ["UUID": .string("0000180d-0000-1000-8000-00805f9b34fb")]])
        let characteristic = service + "/char000b"
        let added = tree.interfacesAdded(
            path: characteristic,
            interfaces: [
                BlueZName.gattCharacteristic: [
                    "UUID": .string("00002a37-0000-1000-8000-00805f9b34fb"), "Service": .objectPath(service),
                    "Flags": .stringArray(["notify"]),
                ]
            ])
        #expect(added == [.characteristicAppeared(path: characteristic, devicePath: device)])
        let found = tree.characteristic(
            ofDevice: device, service: BluetoothUUID("180D")!, uuid: BluetoothUUID("2A37")!)
        #expect(found?.path == characteristic)
        #expect(found?.canNotify == true)
        let value = tree.propertiesChanged(
            path: characteristic, interface: BlueZName.gattCharacteristic,
            changed: ["Value": .variant(.bytes([0, 72]))],
            invalidated: [])
        #expect(value == [.characteristicValue(path: characteristic, value: [0, 72])])
        #expect(tree.devicePath(ofGATTObject: characteristic + "/desc000c") == device)
    }

    @Test func aSnapshotReplacesEverythingAndReportsWhatWentAway() {
        var tree = BlueZObjectTree(maxDevices: 10)
        _ = tree.interfacesAdded(path: Self.devicePath(4), interfaces: [BlueZName.device: Self.deviceProperties(4)])
        let changes = tree.replaceAll(with: .dictionary(keySignature: "o", valueSignature: "a{sa{sv}}", []))
        #expect(
            changes.contains(.deviceRemoved(path: Self.devicePath(4), address: BluetoothAddress("AA:BB:CC:DD:EE:04"))))
        #expect(tree.devices.isEmpty)
    }
}
