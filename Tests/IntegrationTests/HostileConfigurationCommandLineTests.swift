import Foundation
import TestWorld
import Testing

/// Configuration that passes `check-config` never traps at run time, and exposed secrets are pointed out.
@Suite(.timeLimit(.minutes(5))) struct HostileConfigurationCommandLineTests {
    @Test func aDurationThatWouldRoundToZeroFailsCheckConfig() async throws {
        let directory = try makeTemporaryDirectory()
        let path = directory + "/tiny.yaml"
        try """
        mqtt: { url: "mqtt://127.0.0.1:1" }
        bluetooth: { reconnect: { initial: 0.0004, max: 1 } }
        """.write(toFile: path, atomically: true, encoding: .utf8)
        let result = try await GattwayBinary.run(["check-config", path])
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stderr.contains("bluetooth.reconnect.initial: 0.0004 is not a duration"), "\(result.stderr)")
    }

    @Test func aPasswordFileReadableByOthersGetsAWarning() async throws {
        let directory = try makeTemporaryDirectory()
        let secret = directory + "/mqtt.pw"
        try "hunter2\n".write(toFile: secret, atomically: true, encoding: .utf8)
        let path = directory + "/config.yaml"
        try """
        mqtt: { url: "mqtt://127.0.0.1:1", username: gw, password_file: "\(secret)" }
        """.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(secret, 0o644)
        let exposed = try await GattwayBinary.run(["check-config", path])
        #expect(exposed.status == 0)
        #expect(
            exposed.stderr.contains("warning: mqtt.password_file \(secret) is readable by everyone"),
            "\(exposed.stderr)")
        #expect(!exposed.stderr.contains("hunter2"))
        chmod(secret, 0o640)
        let group = try await GattwayBinary.run(["check-config", path])
        #expect(group.stderr.contains("is readable by its group"), "\(group.stderr)")
        chmod(secret, 0o600)
        let ownerOnly = try await GattwayBinary.run(["check-config", path])
        #expect(ownerOnly.status == 0)
        #expect(!ownerOnly.stderr.contains("warning"), "\(ownerOnly.stderr)")
    }
}
