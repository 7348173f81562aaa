import Foundation
import ProcessMemory
import TestWorld
import Testing

/// The daemon's life as systemd and an operator see it: READY=1 only once the broker is connected, and a clean
/// stop on SIGTERM or SIGINT that leaves no device connected in bluetoothd.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct ReadmePromisesLifecycleEndToEndTests {
    @Test func readyIsNotifiedOnlyAfterTheBrokerConnects() async throws {
        let simulator = try await BlueZSimulatorProcess(scenario: "demo.yaml")
        let broker = try await MosquittoBroker()
        await broker.stop()  // down while gattway starts; it comes up on the same port later
        let notify = try NotifySocket()
        let directory = try makeTemporaryDirectory("gattway-notify")
        try """
        mqtt:
          url: "\(broker.url)"
          client_id: gattway-notify
        state_dir: "\(directory)/state"
        \(Configs.strapAndLock)
        """.write(toFile: directory + "/config.yaml", atomically: true, encoding: .utf8)
        let gattway = try GattwayBinary.start(
            config: directory + "/config.yaml",
            // Bound at start, as the release daemon is (-z now): a debug build binds lazily, and its first call of a
            // libc function after READY would read libc's symbol tables back (with fault-around, the whole segment)
            // before the check below could see them dropped.
            environment: [
                "DBUS_SYSTEM_BUS_ADDRESS": simulator.busAddress, "NOTIFY_SOCKET": notify.path, "LD_BIND_NOW": "1",
            ])
        defer {
            Task {
                await gattway.stop()
                await simulator.stop()
            }
        }
        do {
            // The daemon has tried the broker and failed: it is running, and it must not claim to be ready.
            try await withDeadline(.seconds(30), "a failed broker connection in gattway's log") {
                while !gattway.errorOutput.contains("mqtt.connect_failed") {
                    try await Task.sleep(for: .milliseconds(20))
                }
            }
            #expect(gattway.isRunning)
            #expect(!notify.states.contains("READY=1"), "\(notify.states)")
            try await broker.start()
            try await notify.waitFor("READY=1", timeout: .seconds(60))
            // Ready, it drops its libraries' dynamic-linking tables from memory: libc's first segment (headers,
            // symbol tables, relocations; 0.15 MiB resident after loading) keeps only its header page.
            let libcTables = try await Self.residentKiBOfFirstSegment(of: "/libc.so.6", pid: gattway.pid, atMost: 8)
            #expect(libcTables <= 8, "libc's first segment: \(libcTables) KiB resident")
            let observer = try await MQTTObserver(port: broker.port, filters: ["gattway/bridge/state"])
            try await observer.waitForMessage(on: "gattway/bridge/state") { $0 == "online" }
            await observer.stop()
            gattway.send(SIGTERM)
            #expect(await gattway.waitForExit(timeout: .seconds(20)) == 0)
            try await notify.waitFor("STOPPING=1")
            #expect(notify.states.firstIndex(of: "READY=1")! < notify.states.firstIndex(of: "STOPPING=1")!)
        } catch {
            Issue.record("gattway log:\n\(gattway.errorOutput.suffix(3000))")
            await broker.stop()
            throw error
        }
        await broker.stop()
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func aStopSignalPublishesOfflineAndDisconnectsEveryDevice(signal: Int32) async throws {
        let world = try await CentralWorld(scenario: "demo.yaml", config: Configs.strapAndLock)
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/chest-strap/availability") { $0 == "online" }
            try await world.observer.waitForMessage(on: "gattway/lock/availability") { $0 == "online" }
            #expect(try await world.control.isConnected("C4:7C:8D:6A:3E:11") == true)
            #expect(try await world.control.isConnected("D0:0D:10:C4:00:01") == true)
            world.gattway.send(signal)
            #expect(await world.gattway.waitForExit(timeout: .seconds(20)) == 0)
            try await world.observer.waitForMessage(on: "gattway/bridge/state") { $0 == "offline" }
            try await world.observer.waitForMessage(on: "gattway/chest-strap/availability") { $0 == "offline" }
            try await world.observer.waitForMessage(on: "gattway/lock/availability") { $0 == "offline" }
            // bluetoothd keeps a link its client forgot; gattway has to have asked for each disconnection.
            #expect(try await world.control.isConnected("C4:7C:8D:6A:3E:11") == false)
            #expect(try await world.control.isConnected("D0:0D:10:C4:00:01") == false)
        }
    }

    /// The resident KiB of the first (offset 0, read-only) mapping of the library whose path contains `library` in
    /// process `pid`, polled for up to 10 s until it is at most `atMost`.
    static func residentKiBOfFirstSegment(of library: String, pid: Int32, atMost: Int) async throws -> Int {
        var resident = Int.max
        let deadline = ContinuousClock.now + .seconds(10)
        repeat {
            resident = try LoaderTables.residentKiB(ofFirstSegmentOf: library, pid: "\(pid)") ?? Int.max
            if resident <= atMost { return resident }
            try await Task.sleep(for: .milliseconds(100))
        } while ContinuousClock.now < deadline
        return resident
    }
}
