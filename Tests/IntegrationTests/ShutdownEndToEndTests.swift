import Foundation
import TestWorld
import Testing

/// SIGTERM always ends the daemon, promptly and cleanly, whatever it is waiting for.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct ShutdownEndToEndTests {
    /// The deadline for a stop; the daemon's own bound is 10 s of graceful shutdown plus 5 s of cancellation.
    static let stopDeadline: Duration = .seconds(30)

    /// A lock that is never reached: either it is not in the air, or (with the simulator's connect hang) its
    /// connects never answer.
    static func unreachableLock(address: String) -> String {
        """
        bluetooth:
          adapter: hci0
          request_timeout: 10
          connect_timeout: 5
          reconnect: { initial: 0.5, max: 1 }
        devices:
          - name: lock
            address: "\(address)"
            characteristics:
              - { name: control, service: "0000fff0-0000-1000-8000-00805f9b34fb", uuid: "0000fff1-0000-1000-8000-00805f9b34fb", write: with_response, codec: utf8 }
        """
    }

    @Test func sigtermStopsTheDaemonWhileTheBrokerRefusesConnections() async throws {
        let simulator = try await BlueZSimulatorProcess(scenario: "demo.yaml")
        let directory = try makeTemporaryDirectory("gattway-shutdown")
        // A port nothing listens on: every connect is refused and the client keeps retrying.
        let port = try freeLoopbackPort()
        let config = directory + "/config.yaml"
        try """
        mqtt: { url: "mqtt://127.0.0.1:\(port)", client_id: gattway-shutdown }
        state_dir: "\(directory)/state"
        \(Self.unreachableLock(address: "D0:0D:10:C4:99:99"))
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let gattway = try GattwayBinary.start(
            config: config, environment: ["DBUS_SYSTEM_BUS_ADDRESS": simulator.busAddress])
        defer { gattway.send(SIGKILL) }
        try await waitForLog(gattway, containing: "mqtt.connect_failed")
        gattway.send(SIGTERM)
        let status = await gattway.waitForExit(timeout: Self.stopDeadline)
        await simulator.stop()
        #expect(status == 0, "gattway did not stop on SIGTERM; log: \(gattway.errorOutput.suffix(2000))")
        #expect(gattway.errorOutput.contains("gattway.stopped"))
    }

    @Test func sigtermAnswersCommandsQueuedForAnAbsentDeviceAndStops() async throws {
        let lock = "D0:0D:10:C4:00:01"
        let world = try await CentralWorld(
            scenario: "demo.yaml", config: Self.unreachableLock(address: lock),
            prepare: { try await $0.setConnectHang(lock, true) })
        try await world.run { world in
            // Heard, so tracked, but never connected: commands wait for it.
            try await world.observer.waitForMessage(on: "gattway/lock/advert")
            for index in 1...5 {
                try await world.publish(
                    "gattway/lock/control/set", #"{"value":"unlock","transaction":\#(index)}"#)
            }
            // The first command waits up to request_timeout (10 s) for the lock; the others queue behind it.
            try await waitUntilCommandsAreRead(world)
            world.gattway.send(SIGTERM)
            let status = await world.gattway.waitForExit(timeout: Self.stopDeadline)
            #expect(status == 0, "gattway did not stop on SIGTERM")
            // Every queued command got its answer, and the bridge said goodbye.
            try await world.observer.waitForMessage(on: "gattway/lock/control/set/result", skipping: 4)
            let results = world.observer.messages(on: "gattway/lock/control/set/result")
            #expect(results.count == 5)
            #expect(results.allSatisfy { $0.payload.hasPrefix(#"{"ok":false"#) })
            #expect(results.contains { $0.payload.contains("ShuttingDown") })
            try await world.observer.waitForMessage(on: "gattway/bridge/state") { $0 == "offline" }
        }
    }

    /// Waits until gattway has taken the commands off the broker: its subscription answers in order, so a command
    /// that reaches a later topic (an unknown bridge request gets an answer) was read after the five `/set`s.
    private func waitUntilCommandsAreRead(_ world: CentralWorld) async throws {
        try await world.publish("gattway/bridge/request/devices", #"{"transaction":"marker"}"#)
        try await world.observer.waitForMessage(on: "gattway/bridge/response/devices") { $0.contains("marker") }
    }

    private func waitForLog(_ process: ChildProcess, containing text: String) async throws {
        try await withDeadline(.seconds(30), "gattway to log \(text)") {
            while !process.errorOutput.contains(text) {
                guard process.isRunning else { throw TestWorldError("gattway exited: \(process.errorOutput)") }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }
}
