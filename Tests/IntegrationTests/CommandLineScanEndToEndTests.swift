import Foundation
import TestWorld
import Testing

/// `gattway scan` against the simulator: a table for people, one JSON document for scripts.
@Suite(.serialized, .timeLimit(.minutes(5))) struct CommandLineScanEndToEndTests {
    @Test func scanPrintsATableWithAddressNameAndRSSI() async throws {
        try await CommandLineWorld.start(scenario: "demo.yaml").run { world in
            let result = try await world.gattway(["scan", "--duration", "2"])
            #expect(result.status == 0, "\(result.stderr)")
            let lines = result.stdout.split(separator: "\n").map(String.init)
            #expect(
                lines.first?.split(separator: " ", omittingEmptySubsequences: true) == [
                    "ADDRESS", "RSSI", "NAME", "DECODED",
                ])
            let strap = try #require(lines.first { $0.hasPrefix("C4:7C:8D:6A:3E:11") }, "\(result.stdout)")
            #expect(strap.hasSuffix("Polar H10 6A3E11"))
            let rssi = try #require(Int(strap.split(separator: " ", omittingEmptySubsequences: true)[1]))
            #expect((-75 ... -45).contains(rssi))
            #expect(lines.contains { $0.hasPrefix("D0:0D:10:C4:00:01") && $0.hasSuffix("Gattway Lock") })
            // The BTHome thermometer's advertisement, decoded (its two packets: 21.50 or 21.62 °C).
            let thermometer = try #require(lines.first { $0.hasPrefix("A4:C1:38:00:00:01") }, "\(result.stdout)")
            #expect(thermometer.contains("bthome: battery 93 %, temperature 21."), "\(thermometer)")
        }
    }

    @Test func scanJSONIsOneDocumentWithEveryDeviceHeard() async throws {
        try await CommandLineWorld.start(scenario: "demo.yaml").run { world in
            let result = try await world.gattway(["scan", "--duration", "2", "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            let document = try jsonObject(result.stdout)
            #expect(document["adapter"] as? String == "hci0")
            let devices = try #require(document["devices"] as? [[String: Any]])
            let strap = try #require(devices.first { $0["address"] as? String == "C4:7C:8D:6A:3E:11" })
            #expect(strap["name"] as? String == "Polar H10 6A3E11")
            #expect(strap["rssi"] is Int)
            #expect(strap["address_type"] as? String == "public")
            #expect((strap["manufacturer_data"] as? [String: String])?["107"] == "3f0000")
            #expect((strap["uuids"] as? [String])?.contains("0000180d-0000-1000-8000-00805f9b34fb") == true)
            #expect(devices.contains { $0["address"] as? String == "D0:0D:10:C4:00:01" })
            let thermometer = try #require(devices.first { $0["address"] as? String == "A4:C1:38:00:00:01" })
            let decoded = try #require(thermometer["decoded"] as? [String: Any], "\(thermometer)")
            #expect(decoded["format"] as? String == "bthome")
            #expect((decoded["battery"] as? NSNumber)?.intValue == 93)
            #expect(strap["decoded"] == nil)
        }
    }

    @Test func scanOnAnAdapterThatDoesNotExistFailsWithItsName() async throws {
        try await CommandLineWorld.start(scenario: "demo.yaml").run { world in
            let result = try await world.gattway(["scan", "--duration", "1", "--adapter", "hci7"])
            #expect(result.status == 1)
            #expect(result.stderr.contains("gattway: no adapter hci7"), "\(result.stderr)")
        }
    }
}
