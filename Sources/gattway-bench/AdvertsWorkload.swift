import BridgeCore
import DBus
import Foundation

/// What the simulator advertises in one `adverts` workload, and how Gattway is configured to receive it.
enum AdvertsWorkload: Sendable, Equatable {
    /// The sensor crowd scenario: `sensors` sensors in the decoder formats (1,000 in the scenario file), 1,000
    /// advertisements a second among them. Fewer sensors, each advertising more often, tell what the number of
    /// devices costs apart from the number of advertisements (each device's state is found and touched per report).
    case crowd(sensors: Int)
    /// One BTHome sensor advertising `rate` times a second, each advertisement a new reading.
    case burst(rate: Int)
    /// One BTHome sensor advertising `rate` times a second with a new reading once a second, repeating the same
    /// packet in between, as sensors do: most advertisements carry nothing new. With `rssiMoving`, the RSSI of its
    /// reports moves as a real link's does (a random walk of up to 2 dB a report), so a repeat's RSSI mostly changes.
    case repeating(rate: Int, rssiMoving: Bool = false)
    /// The burst's sensor (a new reading in every advertisement) received as Gattway is configured by default:
    /// `advert_min_interval` left at its default, so each advertisement is read, merged and decoded, and its state
    /// written, but the newest state is published only once per interval. What a user who keeps the defaults pays
    /// for a sensor whose every advertisement differs.
    case paced(rate: Int)

    static let burstAddress = "A4:C1:38:B0:00:01"
    /// The RSSI walk of `rssiMoving`: dBm bounds, and the most it moves from one report to the next.
    static let rssiWalk = (min: -75, max: -45, step: 2)

    static let crowd = AdvertsWorkload.crowd(sensors: 1000)

    /// Parses `crowd` (or `crowdN`: N sensors sharing its 1,000/s, N dividing 1,000 and at least 40), a rate such as
    /// `100`, a rate of repeats such as `100r` (`100w`: with the RSSI moving), or a paced rate such as `100p`.
    init?(_ text: String) {
        if text == "crowd" {
            self = .crowd
        } else if text.hasPrefix("crowd"), let sensors = Int(text.dropFirst(5)), (40...1000).contains(sensors),
            1000 % sensors == 0
        {
            self = .crowd(sensors: sensors)
        } else if let rate = Int(text), (1...1000).contains(rate) {
            self = .burst(rate: rate)
        } else if text.hasSuffix("r") || text.hasSuffix("w"), let rate = Int(text.dropLast()),
            (1...1000).contains(rate)
        {
            self = .repeating(rate: rate, rssiMoving: text.hasSuffix("w"))
        } else if text.hasSuffix("p"), let rate = Int(text.dropLast()), (1...1000).contains(rate) {
            self = .paced(rate: rate)
        } else {
            return nil
        }
    }

    var label: String {
        switch self {
        case .crowd(let sensors) where sensors == 1000: "1,000 sensors × 1/s"
        case .crowd(let sensors): "\(sensors) sensors × \(1000 / sensors)/s"
        case .burst(let rate): "1 sensor × \(rate)/s"
        case .repeating(let rate, let rssiMoving): "1 sensor × \(rate)/s, 1 new/s\(rssiMoving ? ", RSSI moving" : "")"
        case .paced(let rate): "1 sensor × \(rate)/s, paced"
        }
    }

    /// Advertisements a second the simulator is asked for.
    var nominalRate: Double {
        switch self {
        case .crowd: 1000
        case .burst(let rate), .repeating(let rate, _), .paced(let rate): Double(rate)
        }
    }

    /// Whether CPU is counted per advertisement the simulator sent rather than per decoded state published: when
    /// most advertisements repeat the last packet, Gattway publishes only the new readings, yet every one of them
    /// had to be received and recognised as a repeat. The same when Gattway publishes only the newest state of an
    /// interval (`paced`): every advertisement was decoded all the same.
    var countsReports: Bool {
        switch self {
        case .repeating, .paced: true
        case .crowd, .burst: false
        }
    }

    /// The fewest states Gattway may publish in a window of `seconds` where CPU is divided by the reports sent:
    /// most of the repeating sensor's new readings (one a second), or one per `advert_min_interval` when paced, but
    /// for the one the window may cut. A Gattway that published fewer would look cheaper for doing less, so its
    /// figure does not count (see `AdvertsReport`).
    func minimumStates(over seconds: Double) -> Double {
        switch self {
        case .paced: seconds / ConfigurationDefaults.advertMinIntervalSeconds - 1
        case .crowd, .burst, .repeating: seconds * 0.8
        }
    }

    /// The scenario file the simulator starts with (none for a burst: its sensor is added afterwards): the crowd's,
    /// or for fewer sensors a copy of it in the temporary directory with their count and interval.
    func scenario(simulator: String) throws -> String? {
        guard case .crowd(let sensors) = self else { return nil }
        let file = (simulator as NSString).deletingLastPathComponent + "/scenarios/sensor-crowd.yaml"
        guard sensors != 1000 else { return file }
        var text = try String(contentsOfFile: file, encoding: .utf8)
        for (field, value) in [("count", sensors), ("interval_ms", sensors)] {
            guard let line = text.range(of: "  \(field): [0-9]+", options: .regularExpression) else {
                throw BenchError("\(file) has no crowd \(field)")
            }
            text.replaceSubrange(line, with: "  \(field): \(value)")
        }
        let copy = NSTemporaryDirectory() + "/gattway-bench-crowd-\(sensors)-\(getpid()).yaml"
        try text.write(toFile: copy, atomically: true, encoding: .utf8)
        return copy
    }

    /// Puts the burst sensor on the air (nothing for the crowd, whose scenario has it all).
    func prepare(_ stage: AdvertsStage) async throws {
        let rate: Int
        let newPackets: String
        var rssiWalk = ""
        switch self {
        case .crowd: return
        case .burst(let burstRate), .paced(let burstRate): (rate, newPackets) = (burstRate, #""every_advert": true"#)
        case .repeating(let repeatRate, let rssiMoving):
            (rate, newPackets) = (repeatRate, #""period_s": 1"#)
            if rssiMoving {
                let walk = Self.rssiWalk
                rssiWalk = #""rssi_walk": {"min": \#(walk.min), "max": \#(walk.max), "step": \#(walk.step)},"#
            }
        }
        let interval = 1000.0 / Double(rate)
        try await stage.simulatorCall(
            "AddPeripheral",
            [
                .string(
                    """
                    {"address": "\(Self.burstAddress)", "connectable": false, "interval_ms": \(interval), "rssi": -55,
                     \(rssiWalk)
                     "advert": {"flags": 6, "name": "ATC_B00001"},
                     "sensor": {"format": "bthome", \(newPackets), "step": {"temperature": 0.01}, "step_wrap": 1000,
                                "readings": [{"battery": 90, "temperature": 20.0, "humidity": 50.0}]}}
                    """)
            ])
    }

    /// Gattway's configuration: devices by `match:` rules, `connect: never`, duplicates on, states published as
    /// often as they change (the repeating sensor's at most once a second, as often as it has a new reading).
    /// `batchMilliseconds` is Gattway's `bluetooth.advert_batch` here (the batching C receivers sleep as long).
    func configuration(brokerURL: String, directory: String, simulator: String, batchMilliseconds: Int) throws -> String
    {
        let advertMinIntervalLine = minimumInterval.map { "  advert_min_interval: \($0)\n" } ?? ""
        var yaml = """
            mqtt:
              url: "\(brokerURL)"
              base_topic: \(BenchWorld.base)
              client_id: gattway-bench
              qos: 0
              metrics_interval: 0
            state_dir: "\(directory)/state"
            log_level: warning
            bluetooth:
              adapter: hci0
              scan: { duplicates: true }
            \(advertMinIntervalLine)  advert_batch: \(Double(batchMilliseconds) / 1000)
              max_tracked_devices: 2000
            devices:

            """
        switch self {
        case .burst, .repeating, .paced:
            yaml += #"  - { name: thermometer, match: { service: "FCD2" }, connect: never }"# + "\n"
        case .crowd:
            let file = (simulator as NSString).deletingLastPathComponent + "/scenarios/sensor-crowd.yaml"
            let key = try Self.crowdBindkey(scenario: file)
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

    /// Gattway's `bluetooth.advert_min_interval` in seconds: short enough that every new reading is published (the
    /// crowd's sensors have one a second each, or one every N ms among N sensors, the repeating sensor one a second),
    /// and no shorter, since Gattway gathers reports for at most that long (`advert_batch`); nil when paced, which
    /// leaves it at Gattway's default.
    var minimumInterval: String? {
        switch self {
        case .crowd(let sensors): String(Double(sensors) / 2000)
        case .burst: "0.001"
        case .repeating: "1"
        case .paced: nil
        }
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
