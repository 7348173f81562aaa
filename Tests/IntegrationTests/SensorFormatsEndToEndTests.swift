import Foundation
import TestWorld
import Testing

/// Every passive format Gattway decodes, end to end: the simulator's sensor-formats scenario advertises known
/// readings in each format (encoded by the simulator from the readings; BTHome and MiBeacon sealed with their
/// bindkeys), and the built binary must publish exactly those readings, with their units.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct SensorFormatsEndToEndTests {
    /// The scenario's sensors: configured name, address, format, and the state (JSON) each must publish besides
    /// `format`.
    static let sensors: [(name: String, address: String, format: String, state: String)] = [
        ("bthome", "A4:C1:38:5E:00:01", "bthome", #"{"temperature":21.5,"humidity":45.25,"battery":93}"#),
        ("bthome-sealed", "A4:C1:38:5E:00:02", "bthome", #"{"temperature":19.87,"humidity":61.5,"battery":77}"#),
        ("mibeacon-sealed", "A4:C1:38:5E:00:03", "mibeacon", #"{"temperature":23.4,"humidity":52.1,"battery":88}"#),
        (
            "pvvx", "A4:C1:38:5E:00:04", "pvvx",
            #"{"temperature":22.15,"humidity":48.37,"battery":91,"voltage":2.987}"#
        ),
        (
            "atc1441", "A4:C1:38:5E:00:05", "atc1441",
            #"{"temperature":-3.5,"humidity":71,"battery":64,"voltage":2.815}"#
        ),
        (
            "ruuvi", "F4:A5:74:89:16:57", "ruuvi_rawv2",
            #"{"temperature":24.3,"humidity":53.49,"pressure":1000.44,"acceleration_x":0.004,"acceleration_y":-0.004,"#
                + #""acceleration_z":1.036,"voltage":2.977,"tx_power":4,"movement_counter":66}"#
        ),
        ("govee", "A4:C1:38:5E:00:07", "govee_h5075", #"{"temperature":24.6,"humidity":39.2,"battery":87}"#),
        ("switchbot", "D4:AA:6B:00:00:08", "switchbot_meter", #"{"temperature":22.4,"humidity":44,"battery":97}"#),
        (
            "inkbird", "49:42:08:00:00:09", "inkbird_ibs_th",
            #"{"temperature":18.23,"humidity":56.78,"external_probe":false,"battery":85}"#
        ),
        (
            "ibeacon", "C0:FF:EE:00:00:0A", "ibeacon",
            #"{"uuid":"e2c56db5-dffb-48d2-b060-d0f5a71096e0","major":1,"minor":42,"measured_power":-59}"#
        ),
        (
            "eddystone-uid", "C0:FF:EE:00:00:0B", "eddystone",
            #"{"tx_power":-18,"namespace":"00112233445566778899","instance":"a1b2c3d4e5f6"}"#
        ),
        ("eddystone-url", "C0:FF:EE:00:00:0C", "eddystone", #"{"tx_power":-20,"url":"https://example.com/sensors"}"#),
        (
            "eddystone-tlm", "C0:FF:EE:00:00:0D", "eddystone",
            #"{"voltage":3.1,"temperature":21.25,"advertisement_count":1000,"uptime":1234.5}"#
        ),
    ]

    @Test func everyFormatIsPublishedWithTheSimulatedReadings() async throws {
        let directory = try makeTemporaryDirectory("gattway-sensor-formats")
        try "5b8c0f8e2a1d4c3b9e7f6a5d4c3b2a19\n".write(
            toFile: directory + "/bthome.key", atomically: true, encoding: .utf8)
        try "e9ea895fac7cca6d30532432a516f3a8\n".write(
            toFile: directory + "/mibeacon.key", atomically: true, encoding: .utf8)
        let keys = ["bthome-sealed": directory + "/bthome.key", "mibeacon-sealed": directory + "/mibeacon.key"]
        var config = "bluetooth: { adapter: hci0 }\ndevices:\n"
        for sensor in Self.sensors {
            let key = keys[sensor.name].map { #", bindkey_file: "\#($0)""# } ?? ""
            config += #"  - { name: \#(sensor.name), address: "\#(sensor.address)", connect: never\#(key) }"# + "\n"
        }
        let world = try await CentralWorld(scenario: "sensor-formats.yaml", config: config)
        try await world.run { world in
            for sensor in Self.sensors {
                let message = try await world.observer.waitForMessage(on: "gattway/\(sensor.name)/state")
                let state = try jsonObject(message.payload)
                #expect(state["format"] as? String == sensor.format, "\(sensor.name): \(message.payload)")
                let expected = try jsonObject(sensor.state)
                #expect(
                    NSDictionary(dictionary: state.filter { $0.key != "format" }) == NSDictionary(dictionary: expected),
                    "\(sensor.name): \(message.payload)")
                let problems = try await PayloadSchemas.problems([
                    (topic: message.topic, schema: "decoded-state.schema.json", payload: message.payload)
                ])
                #expect(problems.isEmpty, "\(problems)")
            }
        }
    }

    /// `gattway scan` shows the same readings with their units (it has no bindkeys, so the sealed sensors stay
    /// undecoded there).
    @Test func scanShowsEachFormatsReadingsWithTheirUnits() async throws {
        let expected = [
            "A4:C1:38:5E:00:01": "bthome: battery 93 %, temperature 21.5 °C, humidity 45.25 %",
            "A4:C1:38:5E:00:04": "pvvx: temperature 22.15 °C, humidity 48.37 %, battery 91 %, voltage 2.987 V",
            "A4:C1:38:5E:00:05": "atc1441: temperature -3.5 °C, humidity 71 %, battery 64 %, voltage 2.815 V",
            "F4:A5:74:89:16:57": "ruuvi_rawv2: temperature 24.3 °C, humidity 53.49 %, pressure 1000.44 hPa, "
                + "acceleration_x 0.004 g, acceleration_y -0.004 g, acceleration_z 1.036 g, voltage 2.977 V, "
                + "tx_power 4 dBm, movement_counter 66",
            "A4:C1:38:5E:00:07": "govee_h5075: temperature 24.6 °C, humidity 39.2 %, battery 87 %",
            "D4:AA:6B:00:00:08": "switchbot_meter: temperature 22.4 °C, humidity 44 %, battery 97 %",
            "49:42:08:00:00:09":
                "inkbird_ibs_th: temperature 18.23 °C, humidity 56.78 %, external_probe false, battery 85 %",
            "C0:FF:EE:00:00:0A":
                "ibeacon: uuid e2c56db5-dffb-48d2-b060-d0f5a71096e0, major 1, minor 42, measured_power -59 dBm",
            "C0:FF:EE:00:00:0D":
                "eddystone: voltage 3.1 V, temperature 21.25 °C, advertisement_count 1000, uptime 1234.5 s",
        ]
        try await CommandLineWorld.start(scenario: "sensor-formats.yaml").run { world in
            let result = try await world.gattway(["scan", "--duration", "3"])
            #expect(result.status == 0, "\(result.stderr)")
            let lines = result.stdout.split(separator: "\n").map(String.init)
            for (address, summary) in expected {
                let line = try #require(lines.first { $0.hasPrefix(address) }, "\(address) missing: \(result.stdout)")
                #expect(line.hasSuffix(summary), "\(line)")
            }
            let sealed = try #require(lines.first { $0.hasPrefix("A4:C1:38:5E:00:02") }, "\(result.stdout)")
            #expect(!sealed.contains("bthome:"), "\(sealed)")
        }
    }
}
