import DBus
import Foundation
import TestWorld
import Testing

/// 20,000 QoS 1 messages published as fast as mosquitto_pub can while the simulated central drains slowly: under
/// backpressure every one arrives in order with memory bounded; under each drop policy exactly its survivors
/// arrive and the drop counter in the status topic makes up the difference.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct PeripheralBackpressureTests {
    static let total = 20_000

    @Test(arguments: ["backpressure", "drop_oldest", "drop_newest", "latest"])
    func aFloodUnderEachQueuePolicy(policy: String) async throws {
        let world = try await PeripheralWorld(whenFull: policy, depth: 16)
        try await world.run { world in
            try await run(world, policy: policy)
        }
    }

    private func run(_ world: PeripheralWorld, policy: String) async throws {
        try await world.waitForApplication()
        try await world.connectCentral(rate: 2_000, buffer: 32)
        _ = try await world.centralCall(
            "WriteCCC", [.string(PeripheralWorld.central), .string(PeripheralWorld.tx), .uint16(1)])
        try await world.observer.waitForMessage(on: "gattway/peripheral/status") { $0.contains(#""subscribers":1"#) }

        let publisher = try ChildProcess(
            "/bin/sh",
            [
                "-c",
                "seq 1 \(Self.total) | mosquitto_pub -h 127.0.0.1 -p \(world.broker.port) -t test/tx -q 1 -l",
            ])
        var received: [Int] = []
        var peakResident = 0
        var drops = 0
        let deadline = ContinuousClock.now + .seconds(240)
        while ContinuousClock.now < deadline {
            received += try await world.received(limit: 5_000).map { Int(String(decoding: $0, as: UTF8.self)) ?? -1 }
            peakResident = max(peakResident, residentMemoryBytes(pid: world.gattway.pid) ?? 0)
            drops = latestDrops(world)
            if received.count + drops >= Self.total && !publisher.isRunning { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(await publisher.waitForExit(timeout: .seconds(5)) == 0)
        // Let the last notifications and the status topic (published at most once a second) catch up.
        let settled = ContinuousClock.now + .seconds(20)
        repeat {
            try await Task.sleep(for: .milliseconds(250))
            received += try await world.received().map { Int(String(decoding: $0, as: UTF8.self)) ?? -1 }
            drops = latestDrops(world)
        } while received.count + drops < Self.total && ContinuousClock.now < settled

        let inOrder = zip(received, received.dropFirst()).allSatisfy { $0 < $1 }
        #expect(inOrder, "values must arrive in order")
        #expect(received.count + drops == Self.total, "received \(received.count) + dropped \(drops)")
        switch policy {
        case "backpressure":
            #expect(received == Array(1...Self.total))
            #expect(drops == 0)
        case "drop_newest":
            #expect(received.first == 1)
            #expect(drops > 0)
        default:  // drop_oldest, latest: the newest value always survives
            #expect(received.last == Self.total)
            #expect(drops > 0)
        }
        // Bounded: the queues are 16 deep and the MQTT inbound buffer pauses at 64 messages.
        #expect(peakResident < 150 * 1024 * 1024, "peak resident \(peakResident / 1024) KiB")
        print("policy \(policy): received \(received.count), dropped \(drops), peak RSS \(peakResident / 1024) KiB")
    }

    private func latestDrops(_ world: PeripheralWorld) -> Int {
        guard let payload = world.observer.messages(on: "gattway/peripheral/status").last?.payload,
            let object = try? JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any],
            let characteristics = object["characteristics"] as? [String: Any],
            let tx = characteristics["tx"] as? [String: Any], let drops = tx["drops"] as? Int
        else { return 0 }
        return drops
    }
}
