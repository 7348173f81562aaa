import Foundation
import TestWorld
import Testing

/// A device whose link drops again and again, end to end: the built gattway binary, the BlueZ simulator dropping
/// the strap's connection (as an out-of-range strap does), mosquitto.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct CentralFlappingEndToEndTests {
    /// 30 drops (a minute's worth at one every 2 s; each waits for the reconnect instead of the clock): the bridge's
    /// running jobs (`gattway.central.jobs`), the process's threads and its resident memory stay flat.
    @Test func aFlappingDeviceLeavesTasksThreadsAndMemoryFlat() async throws {
        let world = try await CentralWorld(
            scenario: "demo.yaml", config: Configs.strapAndLock, extraMQTT: "  metrics_interval: 1")
        try await world.run { world in
            let strap = "C4:7C:8D:6A:3E:11"
            try await world.observer.waitForMessage(on: "gattway/chest-strap/availability") { $0 == "online" }
            try await world.observer.waitForMessage(on: "gattway/lock/availability") { $0 == "online" }
            var cycles: [(jobs: Int, threads: Int, memory: Int)] = []
            for cycle in 1...30 {
                let seen = world.observer.messages(on: "gattway/chest-strap/availability").count
                try await world.control.disconnect(strap)
                try await world.observer.waitForMessage(on: "gattway/chest-strap/availability", skipping: seen) {
                    $0 == "offline"
                }
                try await world.observer.waitForMessage(on: "gattway/chest-strap/availability", skipping: seen + 1) {
                    $0 == "online"
                }
                if cycle % 10 == 0 {
                    let snapshots = world.observer.messages(on: "gattway/bridge/metrics").count
                    let snapshot = try await world.observer.waitForMessage(
                        on: "gattway/bridge/metrics", skipping: snapshots)
                    let jobs = try #require(Self.gauge("gattway.central.jobs", in: snapshot.payload))
                    let threads = try #require(Self.threads(pid: world.gattway.pid))
                    let memory = try #require(residentMemoryBytes(pid: world.gattway.pid))
                    cycles.append((jobs, threads, memory))
                }
            }
            print(
                "gattway after 10/20/30 link drops: jobs \(cycles.map(\.jobs)), threads \(cycles.map(\.threads)), "
                    + "resident MB \(cycles.map { $0.memory >> 20 })")
            // Each tracked device has its task and the strap and the lock their link loops; a few short jobs come and
            // go (device name, lists, adverts). A leak of one task per cycle would add 10 between samples.
            #expect(cycles.allSatisfy { $0.jobs < cycles[0].jobs + 5 }, "\(cycles)")
            #expect(cycles[2].threads <= cycles[0].threads + 2, "\(cycles)")
            #expect(cycles[2].memory <= cycles[0].memory + 8 << 20, "\(cycles)")
        }
    }

    static func gauge(_ name: String, in payload: String) -> Int? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any],
            let gauges = object["gauges"] as? [String: Any]
        else { return nil }
        return (gauges[name] as? NSNumber)?.intValue
    }

    /// The `Threads:` line of /proc/<pid>/status.
    static func threads(pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("Threads:") {
            return Int(line.dropFirst("Threads:".count).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }
}
