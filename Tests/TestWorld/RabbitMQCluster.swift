import Foundation

/// A real RabbitMQ cluster (Debian 12's `rabbitmq-server`) with the MQTT plugin, started as the current user on
/// free loopback ports: each node has its own name, ports, Mnesia and log folders, configuration file and plugin
/// list, and the cluster has its own Erlang cookie and its own `epmd`, so nothing is shared with a system RabbitMQ
/// or with another cluster. The second and later nodes join the first with `rabbitmqctl join_cluster`.
///
/// Speaks MQTT 3.1.1 only (RabbitMQ 3.10's plugin): clients connect with `-V 311`.
/// `stop()` kills every node and the cluster's `epmd`; releasing the cluster without it kills them as well.
package actor RabbitMQCluster {
    /// One node of the cluster.
    package struct Node: Sendable {
        /// The Erlang node name (`gattway-1a2b3c4d-1@localhost`).
        package let name: String
        package let mqttPort: UInt16
        package let amqpPort: UInt16
        package let distributionPort: UInt16
        package let directory: String

        package var mqttURL: String { "mqtt://127.0.0.1:\(mqttPort)" }
        package var logFile: String { "\(directory)/log/\(name).log" }
    }

    /// Where Debian installs the server's own scripts, which run as the current user (those in /usr/sbin switch to
    /// the `rabbitmq` user).
    package static let toolDirectory = "/usr/lib/rabbitmq/bin"

    package nonisolated let nodes: [Node]
    package nonisolated let directory: String
    /// How long starting and clustering the nodes took.
    package private(set) var startupDuration: Duration = .zero
    private let epmdPort: UInt16
    private let home: String
    private var epmd: ChildProcess?
    private var processes: [ChildProcess] = []

    /// Starts `nodeCount` nodes and clusters them; every step has its share of `timeout`.
    package init(nodeCount: Int = 2, timeout: Duration = .seconds(300)) async throws {
        precondition(nodeCount >= 1, "a cluster has at least one node")
        let server = "\(Self.toolDirectory)/rabbitmq-server"
        guard FileManager.default.isExecutableFile(atPath: server) else {
            throw TestWorldError(
                "RabbitMQ is missing at \(server): install Debian's rabbitmq-server (scripts/setup does)")
        }
        directory = try makeTemporaryDirectory("gattway-rabbitmq")
        home = directory + "/home"
        epmdPort = try freeLoopbackPort()
        let tag = directory.suffix(8).lowercased()
        var nodes: [Node] = []
        for index in 1...nodeCount {
            let node = Node(
                name: "gattway-\(tag)-\(index)@localhost", mqttPort: try freeLoopbackPort(),
                amqpPort: try freeLoopbackPort(), distributionPort: try freeLoopbackPort(),
                directory: "\(directory)/node\(index)")
            nodes.append(node)
        }
        self.nodes = nodes
        let started = ContinuousClock.now
        do {
            try await start(deadline: started + timeout)
        } catch {
            await stop()
            throw error
        }
        startupDuration = ContinuousClock.now - started
    }

    /// `mqtt://127.0.0.1:PORT` of node `index` (0-based).
    package nonisolated func mqttURL(node index: Int) -> String { nodes[index].mqttURL }

    /// The nodes that `rabbitmqctl cluster_status` on the first node reports as running.
    package func runningNodes() async throws -> [String] {
        let output = try await rabbitmqctl(nodes[0], ["cluster_status", "--formatter", "json"], timeout: .seconds(60))
        guard let data = output.data(using: .utf8),
            let status = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let running = status["running_nodes"] as? [String]
        else { throw TestWorldError("rabbitmqctl cluster_status printed no running_nodes: \(output.suffix(2000))") }
        return running
    }

    /// Kills every node (SIGKILL: the data is thrown away) and the cluster's epmd, and removes its folder.
    package func stop() async {
        for process in processes where process.isRunning {
            process.send(SIGKILL)
            _ = await process.waitForExit(timeout: .seconds(10))
        }
        processes = []
        if let epmd {
            epmd.send(SIGKILL)
            _ = await epmd.waitForExit(timeout: .seconds(10))
            self.epmd = nil
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Everything node `index` logged so far (the last `limit` characters), for failure messages.
    package nonisolated func log(node index: Int, limit: Int = 4000) -> String {
        Self.tail(of: nodes[index].logFile, limit: limit)
    }

    private static func tail(of file: String, limit: Int = 4000) -> String {
        let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? "(no log at \(file))"
        return String(text.suffix(limit))
    }

    deinit {
        // The ChildProcesses kill their nodes and epmd when released; the folder holds only this cluster's data.
        try? FileManager.default.removeItem(atPath: directory)
    }

    // MARK: - Starting

    private func start(deadline: ContinuousClock.Instant) async throws {
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        // The cluster's own cookie: the server and the command-line tools read $HOME/.erlang.cookie, owner-only.
        let cookie = home + "/.erlang.cookie"
        try UUID().uuidString.replacingOccurrences(of: "-", with: "").write(
            toFile: cookie, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o400], ofItemAtPath: cookie)
        // The cluster's own epmd, in the foreground so that it is a child of the test and dies with it.
        let epmd = try ChildProcess("epmd", ["-port", "\(epmdPort)"], environment: ["HOME": home])
        self.epmd = epmd
        try await Self.waitUntilAccepting(port: epmdPort, deadline: deadline, what: "epmd") {
            epmd.isRunning ? nil : epmd.errorOutput
        }

        for node in nodes {
            try FileManager.default.createDirectory(atPath: node.directory, withIntermediateDirectories: true)
            try configuration(of: node).write(
                toFile: node.directory + "/rabbitmq.conf", atomically: true, encoding: .utf8)
            _ = try await rabbitmqPlugins(node, ["enable", "--offline", "rabbitmq_mqtt"], timeout: deadline - .now)
        }
        for node in nodes {
            // RUNNING_UNDER_SYSTEMD makes the script exec the Erlang VM, so the child is the node itself.
            processes.append(
                try ChildProcess(
                    "\(Self.toolDirectory)/rabbitmq-server", [],
                    environment: environment(of: node).merging(["RUNNING_UNDER_SYSTEMD": "1"]) { $1 }))
        }
        for index in nodes.indices {
            try await waitUntilMQTT(node: index, deadline: deadline, during: "start")
        }
        for (index, node) in nodes.enumerated().dropFirst() {
            for step in [["stop_app"], ["join_cluster", nodes[0].name]] {
                _ = try await rabbitmqctl(node, step, timeout: deadline - .now)
            }
            try await startApp(node, deadline: deadline)
            try await waitUntilMQTT(node: index, deadline: deadline, during: "join_cluster")
        }
        if nodes.count > 1 {
            let running = try await runningNodes()
            guard Set(running) == Set(nodes.map(\.name)) else {
                throw TestWorldError("the RabbitMQ cluster runs \(running), not \(nodes.map(\.name))")
            }
        }
    }

    /// `start_app` after a join, tried again (three times at most, while time is left) when it fails: under load the
    /// joining node's check of the cluster's feature flags can time out (`incompatible_feature_flags` with `badrpc
    /// nodedown`), and a later attempt finds the first node answering.
    private func startApp(_ node: Node, deadline: ContinuousClock.Instant) async throws {
        var attempt = 1
        while true {
            do {
                _ = try await rabbitmqctl(node, ["start_app"], timeout: deadline - .now)
                return
            } catch {
                guard attempt < 3, deadline - .now > .seconds(15) else { throw error }
                attempt += 1
                try await Task.sleep(for: .seconds(2))
            }
        }
    }

    private func configuration(of node: Node) -> String {
        """
        listeners.tcp.1 = 127.0.0.1:\(node.amqpPort)
        mqtt.listeners.tcp.1 = 127.0.0.1:\(node.mqttPort)
        mqtt.allow_anonymous = true
        mqtt.vhost = /
        mqtt.exchange = amq.topic
        log.file.level = info
        log.console = false

        """
    }

    private func environment(of node: Node) -> [String: String] {
        [
            "HOME": home,
            "ERL_EPMD_PORT": "\(epmdPort)",
            "RABBITMQ_NODENAME": node.name,
            "RABBITMQ_NODE_IP_ADDRESS": "127.0.0.1",
            "RABBITMQ_NODE_PORT": "\(node.amqpPort)",
            "RABBITMQ_DIST_PORT": "\(node.distributionPort)",
            "RABBITMQ_MNESIA_BASE": node.directory + "/mnesia",
            "RABBITMQ_LOG_BASE": node.directory + "/log",
            "RABBITMQ_CONFIG_FILE": node.directory + "/rabbitmq.conf",
            "RABBITMQ_ENABLED_PLUGINS_FILE": node.directory + "/enabled_plugins",
            // Configuration files of a system-wide RabbitMQ must not leak in.
            "RABBITMQ_CONF_ENV_FILE": node.directory + "/rabbitmq-env.conf",
            "RABBITMQ_ADVANCED_CONFIG_FILE": node.directory + "/advanced.config",
            // One scheduler each and no busy-waiting: Erlang's schedulers spin by default, and two nodes spinning
            // would starve every other test the suite runs beside them on a two-core machine.
            "RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS": "+S 1:1 +sbwt none +sbwtdcpu none +sbwtdio none",
            "RABBITMQ_CTL_ERL_ARGS": "+S 1:1 +sbwt none +sbwtdcpu none +sbwtdio none",
        ]
    }

    private func waitUntilMQTT(node index: Int, deadline: ContinuousClock.Instant, during step: String) async throws {
        let node = nodes[index]
        let process = processes[index]
        try await Self.waitUntilAccepting(
            port: node.mqttPort, deadline: deadline, what: "RabbitMQ node \(node.name)'s MQTT listener after \(step)"
        ) {
            process.isRunning
                ? nil
                : "the node exited (\(process.program.termination ?? "?")): \(process.errorOutput.suffix(2000)) \(Self.tail(of: node.logFile))"
        }
    }

    private static func waitUntilAccepting(
        port: UInt16, deadline: ContinuousClock.Instant, what: String, exited: @Sendable () -> String?
    ) async throws {
        while ContinuousClock.now < deadline {
            if loopbackPortAcceptsConnections(port) { return }
            if let failure = exited() { throw TestWorldError("\(what): \(failure)") }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw TestWorldError("\(what) accepts no connections on port \(port) in time")
    }

    // MARK: - Command-line tools

    private func rabbitmqctl(_ node: Node, _ arguments: [String], timeout: Duration) async throws -> String {
        try await tool("rabbitmqctl", node, ["-n", node.name] + arguments, timeout: timeout)
    }

    private func rabbitmqPlugins(_ node: Node, _ arguments: [String], timeout: Duration) async throws -> String {
        try await tool("rabbitmq-plugins", node, ["-n", node.name] + arguments, timeout: timeout)
    }

    private func tool(_ name: String, _ node: Node, _ arguments: [String], timeout: Duration) async throws -> String {
        let command = "\(name) \(arguments.joined(separator: " "))"
        guard timeout > .zero else { throw TestWorldError("no time left for \(command)") }
        let (status, stdout, stderr) = try await runToCompletion(
            "\(Self.toolDirectory)/\(name)", arguments, environment: environment(of: node), timeout: timeout)
        guard status == 0 else {
            throw TestWorldError(
                "\(command) failed with status \(status): \(stderr.suffix(2000)) \(stdout.suffix(1000))")
        }
        return stdout
    }

}
