import BluetoothCore
import BridgeCore
import Testing

/// The service data of one advertisement, read and compared as a dictionary of it would be.
@Suite struct AdvertisedServiceDataTests {
    let bthome = BluetoothUUID(uuid16: 0xFCD2)
    let mibeacon = BluetoothUUID(uuid16: 0xFE95)
    let battery = BluetoothUUID(uuid16: 0x180F)

    @Test func readsEachUUIDsDataAndNothingForOthers() {
        let data: AdvertisedServiceData = [bthome: [0x40], mibeacon: [0x50, 0x20], battery: []]
        #expect(data.count == 3)
        #expect(data[bthome] == [0x40])
        #expect(data[mibeacon] == [0x50, 0x20])
        #expect(data[battery] == [])
        #expect(data[BluetoothUUID(uuid16: 0x181A)] == nil)
        #expect(AdvertisedServiceData()[bthome] == nil)
        #expect(AdvertisedServiceData().count == 0)
        // Each entry's length, wherever it lies, as its data would say.
        for uuid in [bthome, mibeacon, battery, BluetoothUUID(uuid16: 0x181A)] {
            #expect(data.dataCount(of: uuid) == data[uuid]?.count)
        }
        #expect(AdvertisedServiceData().dataCount(of: bthome) == nil)
        let facts = AdvertisementFacts(address: BluetoothAddress("A4:C1:38:00:00:01")!, serviceData: data)
        #expect(facts.serviceDataCount(uuid16: 0xFE95) == 2 && facts.serviceDataCount(uuid16: 0x181A) == nil)
    }

    @Test("facts read again in place say what facts made from the same data say, and nothing of the data before")
    func factsReadAgainInPlace() {
        let address = BluetoothAddress("A4:C1:38:00:00:01")!
        let bthomeText = "0000fcd2-0000-1000-8000-00805f9b34fb"
        let mibeaconText = "0000fe95-0000-1000-8000-00805f9b34fb"
        var uuids = UUIDTextCache()
        var kept = AdvertisementFacts(address: address)
        kept.read(
            manufacturerData: [0x0499: [5, 1]], serviceDataByUUIDText: [bthomeText: [0x40], mibeaconText: [0x50]],
            localName: "ATC_000001", uuids: &uuids)
        #expect(
            kept
                == AdvertisementFacts(
                    address: address, manufacturerData: [0x0499: [5, 1]],
                    serviceDataByUUIDText: [bthomeText: [0x40], mibeaconText: [0x50]], localName: "ATC_000001"))
        kept.read(
            manufacturerData: [:], serviceDataByUUIDText: [bthomeText: [0x41], "not a uuid": [1]], localName: nil,
            uuids: &uuids)
        #expect(kept == AdvertisementFacts(address: address, serviceData: [bthome: [0x41]]))
        #expect(kept.serviceData[mibeacon] == nil)
    }

    @Test func settingReplacesAndNilRemovesWhereverTheEntryIs() {
        var data: AdvertisedServiceData = [bthome: [1], mibeacon: [2]]
        data[mibeacon] = [3]
        data[bthome] = [4]
        #expect(data.count == 2)
        #expect(data[bthome] == [4] && data[mibeacon] == [3])
        data[bthome] = nil
        #expect(data.count == 1)
        #expect(data[bthome] == nil && data[mibeacon] == [3])
        data[battery] = [5]
        data[mibeacon] = nil
        #expect(data.count == 1)
        #expect(data[battery] == [5] && data[mibeacon] == nil)
        data[battery] = nil
        data[battery] = nil
        #expect(data == [:])
    }

    @Test func aRepeatedUUIDInALiteralKeepsItsLastData() {
        let data: AdvertisedServiceData = [bthome: [1], bthome: [2]]
        #expect(data.count == 1)
        #expect(data[bthome] == [2])
    }

    @Test func equalityIgnoresOrderButNotUUIDsOrData() {
        let one: AdvertisedServiceData = [bthome: [1], mibeacon: [2], battery: [3]]
        #expect(one == [battery: [3], bthome: [1], mibeacon: [2]])
        #expect(one != [bthome: [1], mibeacon: [2]])
        #expect(one != [bthome: [1], mibeacon: [2], battery: [4]])
        #expect(one != [bthome: [1], mibeacon: [2], BluetoothUUID(uuid16: 0x181A): [3]])
        #expect(AdvertisedServiceData() == [:])
        #expect(AdvertisedServiceData() != [bthome: []])
    }

    /// What bluetoothd reports (UUIDs as text) becomes the facts the decoders read; a key that is no UUID is left
    /// out.
    @Test func factsFromBlueZsTextKeys() throws {
        let facts = AdvertisementFacts(
            address: try #require(BluetoothAddress("A4:C1:38:00:00:01")), manufacturerData: [:],
            serviceDataByUUIDText: ["0000fcd2-0000-1000-8000-00805f9b34fb": [0x40], "not a uuid": [1]],
            localName: nil)
        #expect(facts.serviceData == [bthome: [0x40]])
        #expect(facts.serviceData(uuid16: 0xFCD2) == [0x40])
    }
}

/// A device's service UUIDs read through the cache it keeps: the same answers as parsing each time.
@Suite struct UUIDTextCacheTests {
    @Test func givesWhatParsingGivesForRepeatedAndChangingTexts() {
        var cache = UUIDTextCache()
        let texts = [
            "0000fcd2-0000-1000-8000-00805f9b34fb", "0000fcd2-0000-1000-8000-00805f9b34fb", "not a uuid",
            "not a uuid", "0000FE95-0000-1000-8000-00805F9B34FB", "fcd2", "", "0000fcd2-0000-1000-8000-00805f9b34fb",
        ]
        for text in texts {
            #expect(cache.uuid(of: text) == BluetoothUUID(text), "\(text)")
        }
        #expect(cache.uuid(of: "0000fcd2-0000-1000-8000-00805f9b34fb") == BluetoothUUID(uuid16: 0xFCD2))
    }
}
