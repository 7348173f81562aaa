import BluetoothCore
import Testing

/// Advertised data compared entry to entry gives what `==` gives, for one entry and for more.
@Suite struct AdvertisedDataEqualityTests {
    let bthome = "0000fcd2-0000-1000-8000-00805f9b34fb"
    let mibeacon = "0000fe95-0000-1000-8000-00805f9b34fb"

    @Test func serviceDataAgreesWithEquality() {
        let cases: [AdvertisedEntries<String>] = [
            [:], [bthome: []], [bthome: [1]], [bthome: [2]], [mibeacon: [1]], [bthome: [1], mibeacon: [2]],
            [bthome: [1], mibeacon: [3]], [bthome: [1, 2]],
        ]
        for a in cases {
            for b in cases {
                let same =
                    Dictionary(uniqueKeysWithValues: a.map { ($0.key, $0.value) })
                    == Dictionary(uniqueKeysWithValues: b.map { ($0.key, $0.value) })
                #expect(a.hasSameEntries(as: b) == same, "\(a) against \(b)")
                #expect((a == b) == same, "\(a) against \(b)")
            }
        }
    }

    @Test func manufacturerDataAgreesWithEquality() {
        let cases: [AdvertisedEntries<UInt16>] = [
            [:], [0x004C: []], [0x004C: [1]], [0x004C: [2]], [0x0499: [1]], [0x004C: [1], 0x0499: [2]],
            [0x004C: [1], 0x0499: [3]],
        ]
        for a in cases {
            for b in cases {
                let same =
                    Dictionary(uniqueKeysWithValues: a.map { ($0.key, $0.value) })
                    == Dictionary(uniqueKeysWithValues: b.map { ($0.key, $0.value) })
                #expect(a.hasSameEntries(as: b) == same, "\(a) against \(b)")
                #expect((a == b) == same, "\(a) against \(b)")
            }
        }
    }

    @Test func aDeviceStateSeesANewReadingAndNotARepeat() {
        var state = BLEDeviceState(path: "/org/bluez/hci0/dev_A4_C1_38_00_00_01")
        let reports: [(BLEDeviceProperty, changed: Bool)] = [
            (.serviceData([bthome: [0x40, 0x02]]), true), (.serviceData([bthome: [0x40, 0x02]]), false),
            (.serviceData([bthome: [0x40, 0x03]]), true), (.serviceData([mibeacon: [0x40, 0x03]]), true),
            (.manufacturerData([0x004C: [1]]), true), (.manufacturerData([0x004C: [1]]), false),
            (.manufacturerData([0x004C: [1], 0x0499: [2]]), true),
        ]
        for (property, changed) in reports {
            let applied = state.apply([property])
            #expect(applied == changed, "\(property)")
        }
        #expect(state.serviceData == [mibeacon: [0x40, 0x03]])
        #expect(state.manufacturerData == [0x004C: [1], 0x0499: [2]])
    }
}
