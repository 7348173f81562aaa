import Foundation
import TestWorld
import Testing

/// `deploy/mosquitto/gattway.acl` on a real mosquitto: Gattway works with only the rights it grants, a
/// home-automation user can command the lock, a dashboard cannot, and answers go only to `replies/<user>/`.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct MosquittoACLEndToEndTests {
    static let users = ["gattway": "gw-secret", "home-automation": "ha-secret", "dashboard": "dash-secret"]

    /// A `mosquitto_sub` logged in as `user`, printing `topic<TAB>payload` lines.
    static func subscriber(_ broker: MosquittoBroker, _ user: String, _ filters: [String]) throws -> ChildProcess {
        var arguments = [
            "-h", "127.0.0.1", "-p", "\(broker.port)", "-V", "5", "-q", "1", "-F", "%t\t%p",
            "-u", user, "-P", users[user]!,
        ]
        for filter in filters { arguments += ["-t", filter] }
        return try ChildProcess("mosquitto_sub", arguments)
    }

    /// Publishes as `user`; the exit status is returned, not checked (a refused publish is part of the test).
    @discardableResult
    static func publish(
        _ broker: MosquittoBroker, _ user: String, _ topic: String, _ payload: String, extra: [String] = []
    ) async throws -> Int32? {
        let child = try ChildProcess(
            "mosquitto_pub",
            [
                "-h", "127.0.0.1", "-p", "\(broker.port)", "-V", "5", "-q", "1", "-u", user,
                "-P", users[user]!, "-t", topic, "-m", payload,
            ] + extra)
        return await child.waitForExit(timeout: .seconds(10))
    }

    static func waitForLine(_ process: ChildProcess, _ line: String) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if process.outputLines.contains(line) { return }
            try await Task.sleep(for: .milliseconds(25))
        }
        throw TestWorldError("no line \(line) within 30 s; got \(process.outputLines.suffix(10))")
    }

    @Test func gattwayAndItsClientsWorkWithOnlyWhatTheACLGrants() async throws {
        let simulator = try await BlueZSimulatorProcess(scenario: "demo.yaml")
        let broker = try await MosquittoBroker(
            users: Self.users, aclFile: "\(packageRoot)/deploy/mosquitto/gattway.acl")
        let directory = try makeTemporaryDirectory("gattway-acl")
        let passwordFile = directory + "/mqtt.pw"
        try "gw-secret".write(toFile: passwordFile, atomically: true, encoding: .utf8)
        chmod(passwordFile, 0o600)
        try """
        mqtt:
          url: "mqtt://127.0.0.1:\(broker.port)"
          client_id: gattway-acl
          username: gattway
          password_file: "\(passwordFile)"
        state_dir: "\(directory)/state"
        \(Configs.strapAndLock)
        """.write(toFile: directory + "/config.yaml", atomically: true, encoding: .utf8)
        let dashboard = try Self.subscriber(broker, "dashboard", ["gattway/#"])
        let replies = try Self.subscriber(broker, "home-automation", ["replies/home-automation/#"])
        let control = try await SimulatorControl.connect(to: simulator)
        let gattway = try GattwayBinary.start(
            config: directory + "/config.yaml", environment: ["DBUS_SYSTEM_BUS_ADDRESS": simulator.busAddress])
        do {
            try await Self.waitForLine(dashboard, "gattway/lock/availability\tonline")
            // The dashboard may read but not command: the broker drops its publish.
            try await Self.publish(broker, "dashboard", "gattway/lock/control/set", "unlock")
            try await Self.publish(broker, "home-automation", "gattway/lock/control/set", "lock")
            try await Self.waitForLine(dashboard, "gattway/lock/control/set/result\t{\"ok\":true}")
            let writes = try await control.writes("D0:0D:10:C4:00:01", uuid: "0000fff1-0000-1000-8000-00805f9b34fb")
            #expect(writes == [Array("lock".utf8)])
            // Answers reach the requester below replies/<user>/.
            try await Self.publish(
                broker, "home-automation", "gattway/bridge/request/devices", #"{"transaction":1}"#,
                extra: ["-D", "publish", "response-topic", "replies/home-automation/devices"])
            let deadline = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < deadline,
                !replies.outputLines.contains(where: { $0.hasPrefix("replies/home-automation/devices\t") })
            {
                try await Task.sleep(for: .milliseconds(25))
            }
            #expect(replies.outputLines.contains { $0.contains(#""transaction":1"#) }, "\(replies.outputLines)")
            #expect(gattway.isRunning)
            // Every subscription and publish of Gattway's is one the ACL grants.
            for refusal in ["mqtt.publish.refused", "subscribe.failed", "subscribe.refused"] {
                #expect(!gattway.errorOutput.contains(refusal), "\(gattway.errorOutput.suffix(2000))")
            }
        } catch {
            Issue.record("gattway log:\n\(gattway.errorOutput.suffix(4000))")
            await Self.stopAll(gattway, dashboard, replies, control, broker, simulator)
            throw error
        }
        await Self.stopAll(gattway, dashboard, replies, control, broker, simulator)
    }

    static func stopAll(
        _ gattway: ChildProcess, _ dashboard: ChildProcess, _ replies: ChildProcess, _ control: SimulatorControl,
        _ broker: MosquittoBroker, _ simulator: BlueZSimulatorProcess
    ) async {
        await gattway.stop()
        await dashboard.stop(grace: .milliseconds(200))
        await replies.stop(grace: .milliseconds(200))
        await control.close()
        await broker.stop()
        await simulator.stop()
    }
}
