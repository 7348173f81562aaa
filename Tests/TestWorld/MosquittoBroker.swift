import Foundation

/// A real `mosquitto` broker on a free loopback port, configured for loss-free tests
/// (`max_queued_messages 0`, no persistence), optionally with a TLS listener and a password file.
///
/// `stop()` and `start()` may be called again to simulate a broker restart on the same port.
package actor MosquittoBroker {
    /// Certificates made with `openssl` for a TLS listener: a test CA and a server certificate for 127.0.0.1/localhost.
    package struct Certificates: Sendable {
        package let caFile: String
        package let certFile: String
        package let keyFile: String
    }

    package nonisolated let port: UInt16
    package nonisolated let directory: String
    package nonisolated let certificates: Certificates?
    /// The path of its unix socket listener, when it has one.
    package nonisolated let socketPath: String?
    private let configPath: String
    private var process: ChildProcess?

    /// Starts a broker. `users` (name → password) turns on a password file and refuses anonymous clients;
    /// `tls` makes the listener speak TLS with certificates made for this broker; `aclFile` restricts topics;
    /// `extraConfiguration` lines are added as they are (`set_tcp_nodelay true`, say); `unixSocket` adds a listener on
    /// a unix socket (`socketPath`) beside the TCP one.
    package init(
        users: [String: String] = [:], tls: Bool = false, aclFile: String? = nil, extraConfiguration: [String] = [],
        unixSocket: Bool = false
    ) async throws {
        directory = try makeTemporaryDirectory("gattway-mosquitto")
        port = try freeLoopbackPort()
        certificates = tls ? try await Self.makeCertificates(in: directory) : nil
        socketPath = unixSocket ? directory + "/mosquitto.sock" : nil
        var lines = [
            "listener \(port) 127.0.0.1",
            "max_queued_messages 0",
            "persistence false",
            "log_dest stderr",  // stdout is block-buffered into a pipe; stderr is not
            // Running as root, mosquitto would switch to the `mosquitto` user and lose access to our files.
            "user \(String(cString: getpwuid(getuid()).pointee.pw_name))",
        ]
        if users.isEmpty {
            lines.append("allow_anonymous true")
        } else {
            let passwordFile = directory + "/passwords"
            _ = FileManager.default.createFile(atPath: passwordFile, contents: Data())
            for (name, password) in users.sorted(by: { $0.key < $1.key }) {
                try await Self.runTool("mosquitto_passwd", ["-b", passwordFile, name, password])
            }
            lines += ["allow_anonymous false", "password_file \(passwordFile)"]
        }
        if let aclFile { lines.append("acl_file \(aclFile)") }
        lines += extraConfiguration
        if let certificates {
            lines += [
                "cafile \(certificates.caFile)", "certfile \(certificates.certFile)", "keyfile \(certificates.keyFile)",
            ]
        }
        // After the TLS lines, which belong to the TCP listener before it.
        if let socketPath { lines.append("listener 0 \(socketPath)") }
        configPath = directory + "/mosquitto.conf"
        try (lines.joined(separator: "\n") + "\n").write(toFile: configPath, atomically: true, encoding: .utf8)
        try await start()
    }

    /// `mqtt://127.0.0.1:PORT`, or `mqtts://localhost:PORT` with TLS (the certificate names localhost).
    package nonisolated var url: String {
        certificates == nil ? "mqtt://127.0.0.1:\(port)" : "mqtts://localhost:\(port)"
    }

    /// Starts (or restarts) the broker and waits until it is ready.
    package func start() async throws {
        guard process?.isRunning != true else { return }
        let child = try ChildProcess("mosquitto", ["-c", configPath])
        process = child
        try await waitUntilAccepting(child)
    }

    /// Stops the broker abruptly (SIGKILL), as a crash or power loss would; clients see the link drop.
    package func stop() async {
        guard let process else { return }
        process.send(SIGKILL)
        _ = await process.waitForExit(timeout: .seconds(10))
        self.process = nil
    }

    /// The running broker's process id (whose CPU a benchmark counts), or nil while it is stopped.
    package var pid: Int32? { process.flatMap { $0.isRunning ? $0.pid : nil } }

    /// Everything the broker logged so far.
    package var log: String { process?.errorOutput ?? "" }

    private func waitUntilAccepting(_ child: ChildProcess) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        // The port is tried once more after the deadline: when the whole suite starts at once, this task may not
        // run again until the deadline has passed, and the broker has been listening all along.
        while true {
            if loopbackPortAcceptsConnections(port) { return }
            if !child.isRunning {
                throw TestWorldError(
                    "mosquitto exited (\(child.program.termination ?? "?")): \(child.errorOutput.suffix(2000))"
                )
            }
            if ContinuousClock.now >= deadline { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TestWorldError(
            "mosquitto on port \(port) accepts no connections after 30 s; log: \(child.errorOutput.suffix(2000))")
    }

    /// Runs a command-line tool to completion, failing with its output when it exits non-zero.
    package static func runTool(_ tool: String, _ arguments: [String], currentDirectory: String? = nil) async throws {
        let child = try ChildProcess(tool, arguments, currentDirectory: currentDirectory)
        guard let status = await child.waitForExit(timeout: .seconds(30)) else {
            await child.stop()
            throw TestWorldError("\(tool) \(arguments.joined(separator: " ")) did not finish within 30 s")
        }
        guard status == 0 else {
            throw TestWorldError(
                "\(tool) \(arguments.joined(separator: " ")) failed with status \(status): \(child.errorOutput)")
        }
    }

    /// Makes a CA and a server certificate (SAN localhost and 127.0.0.1) signed by it.
    private static func makeCertificates(in directory: String) async throws -> Certificates {
        let script = """
            set -e
            openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=Gattway Test CA" -keyout ca.key -out ca.crt 2>/dev/null
            openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout server.key -out server.csr 2>/dev/null
            printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n' > san.ext
            openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile san.ext -out server.crt 2>/dev/null
            """
        // The script's own failures end it (`set -e`); openssl finishes in well under a second.
        let (status, _, errors) = try await runToCompletion(
            "/bin/sh", ["-c", "cd '\(directory)' && " + script], timeout: .seconds(60))
        guard status == 0 else {
            throw TestWorldError(
                "openssl could not make test certificates in \(directory) (status \(status)): \(errors)")
        }
        return Certificates(
            caFile: directory + "/ca.crt", certFile: directory + "/server.crt", keyFile: directory + "/server.key")
    }

    deinit {
        // The ChildProcess kills the broker when released; the folder holds only test material.
        try? FileManager.default.removeItem(atPath: directory)
    }
}
