import BluetoothCore
import BridgeCore
import Testing

@Suite struct AdvertisingBudgetTests {
    private func advert(
        uuids: [String] = [], manufacturer: (UInt16, Int)? = nil, serviceData: (String, Int)? = nil,
        includes: [AdvertisementConfiguration.Include] = [], appearance: UInt16? = nil, localName: String? = nil
    ) -> AdvertisementConfiguration {
        AdvertisementConfiguration(
            localName: localName, serviceUUIDs: uuids.map { BluetoothUUID($0)! },
            manufacturerData: manufacturer.map { ($0.0, [UInt8](repeating: 0, count: $0.1)) },
            serviceData: serviceData.map { (BluetoothUUID($0.0)!, [UInt8](repeating: 0, count: $0.1)) },
            discoverable: true, includes: includes, appearance: appearance)
    }

    @Test func flagsAloneTakeThreeBytes() {
        #expect(AdvertisingBudget(advert(localName: "a very long name that goes to the scan response")).total == 3)
    }

    @Test func manufacturerDataLeavesTwentyFourBytesOfPayload() {
        #expect(AdvertisingBudget(advert(manufacturer: (0x004C, 24))).total == 31)
        #expect(AdvertisingBudget(advert(manufacturer: (0x004C, 25))).overflow == 1)
    }

    @Test func uuidsAreGroupedBySize() {
        // 3 + (2 + 2×2) + (2 + 4) + (2 + 16) = 33
        let budget = AdvertisingBudget(
            advert(uuids: ["180D", "180F", "12345678", "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"]))
        #expect(budget.total == 33)
        #expect(budget.overflow == 2)
        #expect(
            budget.parts.last == .init(name: "service UUIDs", bytes: 30, detail: "2 × 16-bit, 1 × 32-bit, 1 × 128-bit"))
        // A repeated UUID is advertised once.
        #expect(AdvertisingBudget(advert(uuids: ["180D", "180d"])).total == 3 + 4)
    }

    @Test func txPowerAppearanceAndServiceDataCount() {
        // 3 + 3 + 4 + (2 + 2 + 5) = 19
        let budget = AdvertisingBudget(advert(serviceData: ("FCD2", 5), includes: [.txPower], appearance: 0x0341))
        #expect(budget.total == 19)
        #expect(budget.overflowMessage == nil)
    }

    @Test func overflowMessageNamesEveryPart() {
        let budget = AdvertisingBudget(
            advert(uuids: ["6E400001-B5A3-F393-E0A9-E50E24DCCA9E"], manufacturer: (0x004C, 12)))
        #expect(
            budget.overflowMessage
                == "advertisement needs 37 bytes, 6 over the 31-byte legacy limit (flags 3, service UUIDs 18 (1 × 128-bit), manufacturer data 16 (company 0x004C + 12 bytes))"
        )
    }
}
