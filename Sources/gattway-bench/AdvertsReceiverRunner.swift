import Foundation
import TestWorld

/// The receivers `adverts` compares.
enum AdvertsReceiverKind: String, Sendable {
    /// Receives and counts: the floor the issue of record names.
    case c
    /// Receives and publishes the advertised bytes twice, as Gattway publishes state and advert: the floor of the
    /// same MQTT work without decoding or JSON.
    case cPublishing = "c-publish"
    /// Receives and counts in batches, as Gattway reads while only reports arrive (`bluetooth.advert_batch`, the
    /// same interval): the floor of receiving when wake-ups are shared.
    case cBatching = "c-batch"
    /// Receives in batches and publishes as `cPublishing` does: the floor of Gattway's work in batches, without
    /// decoding or JSON.
    case cBatchPublishing = "c-batch-publish"
    /// Receives in batches without libdbus (its own connection, read into one buffer and walked in place, nothing
    /// validated): the floor under any receiver that reads the bus through libdbus.
    case cRawBatching = "c-raw-batch"
    /// Receives as `cRawBatching` does and publishes as `cPublishing` does.
    case cRawBatchPublishing = "c-raw-batch-publish"
    case gattway
    /// Another build of Gattway (`--baseline`), measured in the same rounds as the one under test: a change that
    /// moves time but not instructions (code layout, batching) shows only beside its baseline, as windows of
    /// separate runs differ by a third.
    case gattwayBaseline = "gattway-baseline"

    var title: String {
        switch self {
        case .c: "C receiver"
        case .cPublishing: "C rcv+MQTT"
        case .cBatching: "C rcv batch"
        case .cBatchPublishing: "C batch+MQTT"
        case .cRawBatching: "C raw batch"
        case .cRawBatchPublishing: "C raw+MQTT"
        case .gattway: "Gattway"
        case .gattwayBaseline: "Gattway base"
        }
    }

    var isC: Bool { self != .gattway && self != .gattwayBaseline }

    /// A C program that publishes every advertisement it receives.
    var publishes: Bool { self == .cPublishing || self == .cBatchPublishing || self == .cRawBatchPublishing }

    /// The C receiver's arguments against the broker at `brokerArguments` (HOST PORT); none for Gattway, which is
    /// given a configuration file instead.
    func arguments(broker brokerArguments: [String], batchMilliseconds: Int) -> [String] {
        let batch = ["-b", "\(batchMilliseconds)"]
        let broker = publishes ? brokerArguments : []
        return switch self {
        case .gattway, .gattwayBaseline: []
        case .c, .cPublishing: ["hci0"] + broker
        case .cBatching, .cBatchPublishing: batch + ["hci0"] + broker
        case .cRawBatching, .cRawBatchPublishing: ["-r"] + batch + ["hci0"] + broker
        }
    }
}

/// One receiver's figures over one measured window of one workload.
struct AdvertsRow: Sendable {
    let receiver: AdvertsReceiverKind
    let workload: AdvertsWorkload
    /// The round it was measured in (from 1).
    let round: Int
    let seconds: Double
    /// Advertisement reports the simulator sent in the window.
    let sent: Int
    /// Advertisements the receiver took in: signals with advertised data counted by the C receiver, decoded states
    /// the subscriber received from Gattway.
    let received: Int
    let cpuSeconds: Double
    /// The receiver's voluntary context switches in the window (its threads' sleeps a wake-up ended), nil when
    /// they could not be read.
    let wakes: Int?
    let memory: CompareMemory
    /// Shares of one core over the window.
    let simulatorCores: Double
    let busCores: Double
    /// The share of the machine's CPU time the hypervisor took over the window (`HostCPUTimes`; NaN: unknown).
    let hostSteal: Double

    /// The advertisements CPU is divided by: those taken in, or on a workload of repeats every report sent (see
    /// `AdvertsWorkload.countsReports`).
    var counted: Int { workload.countsReports ? sent : received }
    var microsPerAdvert: Double { counted > 0 ? cpuSeconds * 1e6 / Double(counted) : .nan }
    var wakesPerAdvert: Double { BenchProcStats.perValue(0, wakes, values: counted) }
    var sentRate: Double { Double(sent) / seconds }
}

/// Starts one receiver at a time on a workload's stage, lets it warm up, measures a window and stops it.
struct AdvertsReceiverRunner {
    let stage: AdvertsStage
    let workload: AdvertsWorkload
    let receiverBinary: String
    let gattwayPath: String
    /// The build `gattway-baseline` runs.
    let baselinePath: String?
    let simulatorPath: String
    /// Gattway's `bluetooth.advert_batch` and the batching C receivers' sleep.
    let batchMilliseconds: Int
    let warmUp: Duration
    let window: Duration

    /// Writes Gattway's configuration for this workload into the stage's folder; returns its path.
    func writeConfiguration() throws -> String {
        let path = stage.directory + "/gattway.yaml"
        try workload.configuration(
            brokerURL: stage.brokerURL, directory: stage.directory, simulator: simulatorPath,
            batchMilliseconds: batchMilliseconds
        )
        .write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func measure(_ kind: AdvertsReceiverKind, round: Int) async throws -> AdvertsRow {
        let environment = ["DBUS_SYSTEM_BUS_ADDRESS": stage.busAddress]
        let log = stage.directory + "/\(kind.rawValue).log"
        let process: BenchProcess
        switch kind {
        case .c, .cPublishing, .cBatching, .cBatchPublishing, .cRawBatching, .cRawBatchPublishing:
            let program = BenchProcess.cProgram(
                receiverBinary, kind.arguments(broker: stage.brokerArguments, batchMilliseconds: batchMilliseconds))
            process = try BenchProcess(program.executable, program.arguments, environment: environment, logPath: log)
            _ = try await process.waitForLine(prefix: "receiver: ready", timeout: .seconds(60))
        case .gattway, .gattwayBaseline:
            let configuration = try writeConfiguration()
            guard let path = kind == .gattway ? gattwayPath : baselinePath else {
                throw BenchError("the receiver gattway-baseline needs --baseline")
            }
            process = try BenchProcess(
                path, ["run", "--config", configuration], environment: environment, logPath: log)
            try await waitForFirstState(process)
        }
        do {
            let row = try await measureWindow(kind, process, round: round)
            await process.stop()
            return row
        } catch {
            progress("\(process.name) log:\n\(process.logTail(1500))")
            await process.stop()
            throw error
        }
    }

    private func measureWindow(
        _ kind: AdvertsReceiverKind, _ process: BenchProcess, round: Int
    ) async throws -> AdvertsRow {
        try await Task.sleep(for: warmUp)
        let busPID = stage.simulator.busDaemonPID
        let receivedBefore = try await received(kind, process)
        let sentBefore = try await stage.reportsSent()
        let cpuBefore = cpu(process.pid, busPID)
        let hostBefore = HostCPUTimes.now()
        let wakesBefore = BenchProcStats.voluntarySwitches(pid: process.pid)
        let start = ContinuousClock.now
        try await Task.sleep(for: window)
        let receivedAfter = try await received(kind, process)
        let sentAfter = try await stage.reportsSent()
        let cpuAfter = cpu(process.pid, busPID)
        let hostAfter = HostCPUTimes.now()
        let wakesAfter = BenchProcStats.voluntarySwitches(pid: process.pid)
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        guard process.isRunning else { throw BenchError("\(process.name) exited: \(process.logTail())") }
        return AdvertsRow(
            receiver: kind, workload: workload, round: round, seconds: seconds, sent: sentAfter - sentBefore,
            received: receivedAfter - receivedBefore, cpuSeconds: cpuAfter.receiver - cpuBefore.receiver,
            wakes: wakesBefore.flatMap { before in wakesAfter.map { $0 - before } },
            memory: CompareMemory(pid: process.pid),
            simulatorCores: (cpuAfter.simulator - cpuBefore.simulator) / seconds,
            busCores: (cpuAfter.bus - cpuBefore.bus) / seconds,
            hostSteal: HostCPUTimes.stealShare(from: hostBefore, to: hostAfter))
    }

    private func cpu(_ receiver: Int32, _ bus: Int32?) -> (receiver: Double, simulator: Double, bus: Double) {
        (
            BenchProcStats.cpuSeconds(pid: receiver) ?? .nan,
            BenchProcStats.cpuSeconds(pid: stage.simulator.pid) ?? .nan,
            bus.flatMap { BenchProcStats.cpuSeconds(pid: $0) } ?? .nan
        )
    }

    /// Advertisements taken in so far: the C receiver's own count (asked for with SIGUSR1), or the states
    /// Gattway published that the subscriber received.
    private func received(_ kind: AdvertsReceiverKind, _ process: BenchProcess) async throws -> Int {
        guard kind.isC else { return stage.states.received.messages }
        let prefix = "receiver: adverts "
        let before = process.lines(prefix: prefix).count
        kill(process.pid, SIGUSR1)
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline {
            let lines = process.lines(prefix: prefix)
            if lines.count > before, let last = lines.last, let count = Int(last.dropFirst(prefix.count)) {
                return count
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw BenchError("the C receiver did not report its count within 5 s: \(process.logTail())")
    }

    /// Gattway is receiving once a first decoded state arrives (it connects, subscribes and starts discovery first).
    private func waitForFirstState(_ process: BenchProcess) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while stage.states.received.messages == 0 {
            guard process.isRunning else { throw BenchError("gattway exited: \(process.logTail())") }
            guard ContinuousClock.now < deadline else {
                throw BenchError("no decoded state from gattway within 60 s: \(process.logTail())")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }
}
