import DBus
import Foundation
import TestWorld
import Testing

/// Passive sensors arrive decoded: the measurements of a device's advertisements on `<device>/state`.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct DecodedAdvertEndToEndTests {
    @Test func theDemoThermometerIsPublishedDecoded() async throws {
        let world = try await CentralWorld(scenario: "demo.yaml", config: Configs.strapAndLock)
        try await world.run { world in
            let state = try await world.observer.waitForMessage(on: "gattway/thermometer/state")
            // The demo's BTHome thermometer alternates between two packets (21.50 and 21.62 °C, battery 93 %).
            #expect(
                [
                    #"{"battery":93,"temperature":21.5,"format":"bthome"}"#,
                    #"{"battery":93,"temperature":21.62,"format":"bthome"}"#,
                ].contains(state.payload), "\(state.payload)")
            let problems = try await PayloadSchemas.problems([
                (topic: state.topic, schema: "decoded-state.schema.json", payload: state.payload)
            ])
            #expect(problems.isEmpty, "\(problems)")
            // The lock's advertisement carries no sensor format: nothing is made up for it.
            #expect(world.observer.messages(on: "gattway/chest-strap/state").isEmpty)
        }
    }

    /// bthome.io's encrypted example: its key, its address and its packet decode to 25.06 °C and 50.55 %.
    @Test func anEncryptedBTHomeSensorIsDecodedWithItsBindkeyAndRefusedWithAWrongOne() async throws {
        let directory = try makeTemporaryDirectory("gattway-bindkey")
        try "231d39c1d7cc1ab1aee224cd096db932\n".write(
            toFile: directory + "/right.key", atomically: true, encoding: .utf8)
        try "231d39c1d7cc1ab1aee224cd096db933\n".write(
            toFile: directory + "/wrong.key", atomically: true, encoding: .utf8)
        let config = """
            bluetooth: { adapter: hci0 }
            devices:
              - { name: sealed, address: "54:48:E6:8F:80:A5", connect: never, bindkey_file: "\(directory)/right.key" }
              - { name: forged, address: "54:48:E6:8F:80:A6", connect: never, bindkey_file: "\(directory)/wrong.key" }
            """
        let world = try await CentralWorld(scenario: "demo.yaml", config: config, extraMQTT: "  metrics_interval: 1") {
            control in
            for address in ["54:48:E6:8F:80:A5", "54:48:E6:8F:80:A6"] {
                _ = try await control.call(
                    "AddPeripheral",
                    [
                        .string(
                            """
                            {"address": "\(address)", "address_type": "public", "connectable": false, "interval_ms": 200,
                             "rssi": -60, "advert": {"flags": 6, "service_data": {"fcd2": "41a47266c95f730011223378237214"}}}
                            """)
                    ])
            }
        }
        try await world.run { world in
            let state = try await world.observer.waitForMessage(on: "gattway/sealed/state")
            #expect(state.payload == #"{"temperature":25.06,"humidity":50.55,"format":"bthome"}"#)
            // The second device's key does not open the packet: counted, never published.
            try await world.observer.waitForMessage(on: "gattway/bridge/metrics") {
                $0.contains("adverts_undecodable") && $0.contains("decryptionFailed")
            }
            #expect(world.observer.messages(on: "gattway/forged/state").isEmpty)
        }
    }

    /// A bindkey added by a reload (the device also moves in the list) opens the packets from then on; repeats of
    /// one packet are not counted as replays.
    @Test func aReloadReadsTheBindkeysAgain() async throws {
        let directory = try makeTemporaryDirectory("gattway-bindkey-reload")
        try "231d39c1d7cc1ab1aee224cd096db932\n".write(
            toFile: directory + "/right.key", atomically: true, encoding: .utf8)
        let sealed = #"  - { name: sealed, address: "54:48:E6:8F:80:A5", connect: never }"#
        let world = try await CentralWorld(
            scenario: "demo.yaml", config: "bluetooth: { adapter: hci0 }\ndevices:\n" + sealed,
            extraMQTT: "  metrics_interval: 1"
        ) { control in
            _ = try await control.call(
                "AddPeripheral",
                [
                    .string(
                        """
                        {"address": "54:48:E6:8F:80:A5", "address_type": "public", "connectable": false, "interval_ms": 100,
                         "rssi": -60, "rssi_walk": {"min": -80, "max": -50, "step": 3}, "advert": {"flags": 6, "service_data": {"fcd2": "41a47266c95f730011223378237214"}}}
                        """)
                ])
        }
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/bridge/metrics") { $0.contains("missingKey") }
            let text = try String(contentsOfFile: world.configPath, encoding: .utf8)
            let withKey = text.replacingOccurrences(
                of: sealed,
                with: #"  - { name: lock, address: "D0:0D:10:C4:00:01", connect: on_demand }"# + "\n"
                    + sealed.replacingOccurrences(of: " }", with: #", bindkey_file: "\#(directory)/right.key" }"#))
            try withKey.write(toFile: world.configPath, atomically: true, encoding: .utf8)
            world.gattway.send(SIGHUP)
            let state = try await world.observer.waitForMessage(on: "gattway/sealed/state")
            #expect(state.payload == #"{"temperature":25.06,"humidity":50.55,"format":"bthome"}"#)
            // The same packet keeps coming (every 100 ms, RSSI reports between): decoded once, never a "replay".
            let metrics = try await world.observer.waitForMessage(
                on: "gattway/bridge/metrics", skipping: world.observer.messages(on: "gattway/bridge/metrics").count)
            #expect(!metrics.payload.contains("replayed"), "\(metrics.payload)")
        }
    }
}
