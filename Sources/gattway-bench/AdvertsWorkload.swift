import DBus
import Foundation

/// What the simulator advertises in one `adverts` workload, and how Gattway is configured to receive it.
enum AdvertsWorkload: Sendable, Equatable {
    /// The sensor crowd scenario: 1,000 sensors in the decoder formats, one advertisement a second each.
    case crowd
    /// One BTHome sensor advertising `rate` times a second, each advertisement a new reading.
    case burst(rate: Int)

    static let burstAddress = "A4:C1:38:B0:00:01"

    /// Parses `crowd` or a rate such as `100`.
    init?(_ text: String) {
        if text == "crowd" {
            self = .crowd
        } else if let rate = Int(text), (1...1000).contains(rate) {
            self = .burst(rate: rate)
        } else {
            return nil
        }
    }

    var label: String {
        switch self {
        case .crowd: "1,000 sensors × 1/s"
        case .burst(let rate): "1 sensor × \(rate)/s"
        }
    }

    /// Advertisements a second the simulator is asked for.
    var nominalRate: Double {
        switch self {
        case .crowd: 1000
        case .burst(let rate): Double(rate)
        }
    }

    /// The scenario file the simulator starts with (none for a burst: its sensor is added afterwards).
    func scenario(simulator: String) -> String? {
        guard self == .crowd else { return nil }
        return (simulator as NSString).deletingLastPathComponent + "/scenarios/sensor-crowd.yaml"
    }

    /// Puts the burst sensor on the air (nothing for the crowd, whose scenario has it all).
    func prepare(_ stage: AdvertsStage) async throws {
        guard case .burst(let rate) = self else { return }
        let interval = 1000.0 / Double(rate)
        try await stage.simulatorCall(
            "AddPeripheral",
            [
                .string(
                    """
                    {"address": "\(Self.burstAddress)", "connectable": false, "interval_ms": \(interval), "rssi": -55,
                     "advert": {"flags": 6, "name": "ATC_B00001"},
                     "sensor": {"format": "bthome", "every_advert": true, "step": {"temperature": 0.01}, "step_wrap": 1000,
                                "readings": [{"battery": 90, "temperature": 20.0, "humidity": 50.0}]}}
                    """)
            ])
    }

    /// Gattway's configuration: devices by `match:` rules, `connect: never`, duplicates on, states published as
    /// often as they change.
    func configuration(port: UInt16, directory: String, simulator: String) throws -> String {
        var yaml = """
            mqtt:
              url: "mqtt://127.0.0.1:\(port)"
              base_topic: \(BenchWorld.base)
              client_id: gattway-bench
              qos: 0
              metrics_interval: 0
            state_dir: "\(directory)/state"
            log_level: warning
            bluetooth:
              adapter: hci0
              scan: { duplicates: true }
              advert_min_interval: 0.001
              max_tracked_devices: 2000
            devices:

            """
        switch self {
        case .burst:
            yaml += #"  - { name: thermometer, match: { service: "FCD2" }, connect: never }"# + "\n"
        case .crowd:
            let key = try Self.crowdBindkey(scenario: scenario(simulator: simulator) ?? "")
            try (key + "\n").write(toFile: directory + "/crowd.key", atomically: true, encoding: .utf8)
            let sealed = #", bindkey_file: "\#(directory)/crowd.key""#
            for (name, match, extra) in [
                ("bthome", #"service: "FCD2""#, sealed), ("mibeacon", #"service: "FE95""#, sealed),
                ("thermometer", #"service: "181A""#, ""), ("switchbot", #"service: "FD3D""#, ""),
                ("eddystone", #"service: "FEAA""#, ""), ("ruuvi", "manufacturer_id: 1177", ""),
                ("govee", "manufacturer_id: 60552", ""), ("ibeacon", "manufacturer_id: 76", ""),
                ("inkbird", #"name_prefix: "sps""#, ""),
            ] {
                yaml += "  - { name: \(name), match: { \(match) }, connect: never\(extra) }\n"
            }
        }
        return yaml
    }

    /// The crowd's bindkey, from its scenario file (`bindkey: <32 hex digits>`), so the two never disagree.
    static func crowdBindkey(scenario: String) throws -> String {
        let text = try String(contentsOfFile: scenario, encoding: .utf8)
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if parts.count == 2, parts[0] == "bindkey", parts[1].count == 32 { return parts[1] }
        }
        throw BenchError("\(scenario) names no crowd bindkey")
    }
}
