import BluetoothCore
import Testing

/// `apply` reports whether what an advert shows changed: the advert publisher does nothing more for a report that
/// repeats the last one, so a change it misses is a reading never published.
@Suite struct BLEDeviceStateTests {
    private static let bthome = "0000fcd2-0000-1000-8000-00805f9b34fb"
    private static let path = "/org/bluez/hci0/dev_A4_C1_38_B0_00_01"

    private static let report: [BLEDeviceProperty] = [
        .name("ATC_B00001"), .alias("ATC_B00001"), .rssi(-60), .txPower(4), .uuids([bthome]),
        .manufacturerData([0x004C: [2, 21]]), .serviceData([bthome: [0x40, 0x02, 0xCA, 0x09]]),
    ]

    @Test func aReportThatRepeatsTheLastChangesNothing() {
        var state = BLEDeviceState(path: Self.path)
        let changed1 = state.apply(Self.report)
        #expect(changed1)
        let changed2 = state.apply(Self.report)
        #expect(!changed2)
        let changed3 = state.apply([.rssi(-60), .serviceData([Self.bthome: [0x40, 0x02, 0xCA, 0x09]])])
        #expect(!changed3)
        let changed4 = state.apply([])
        #expect(!changed4)
    }

    @Test(arguments: [
        BLEDeviceProperty.name("ATC_B00002"), .name(nil), .alias("kitchen"), .rssi(-61), .rssi(nil), .txPower(0),
        .uuids([]), .manufacturerData([0x004C: [2, 22]]), .manufacturerData([:]),
        .serviceData(["0000fcd2-0000-1000-8000-00805f9b34fb": [0x40, 0x02, 0xCA, 0x0A]]),
        .serviceData(["0000fcd2-0000-1000-8000-00805f9b34fb": [0x40, 0x02, 0xCA, 0x09], "181a": [1]]),
    ])
    func eachChangeOfWhatAnAdvertShowsIsReported(_ change: BLEDeviceProperty) {
        var state = BLEDeviceState(path: Self.path, properties: Self.report)
        let changed5 = state.apply([change])
        #expect(changed5)
        // Applied: the same change again is a repeat.
        let changed6 = state.apply([change])
        #expect(!changed6)
    }

    @Test(arguments: [
        BLEDeviceProperty.connected(true), .servicesResolved(true), .paired(true), .trusted(true),
        .addressType("random"),
    ])
    func whatNoAdvertShowsIsAppliedButNotReported(_ change: BLEDeviceProperty) {
        var state = BLEDeviceState(path: Self.path, properties: Self.report)
        let before = state
        let changed7 = state.apply([change])
        #expect(!changed7)
        #expect(state != before)
    }

    @Test func aChangeAmongRepeatsIsReported() {
        var state = BLEDeviceState(path: Self.path, properties: Self.report)
        let changed8 = state.apply([.rssi(-60), .serviceData([Self.bthome: [0x40, 0x02, 0xCA, 0x0A]]), .txPower(4)])
        #expect(changed8)
        #expect(state.serviceData == [Self.bthome: [0x40, 0x02, 0xCA, 0x0A]])
    }
}
