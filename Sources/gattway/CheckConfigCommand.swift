import ArgumentParser
import BridgeCore
import Glibc

/// `gattway check-config FILE`: exit 0 when valid; otherwise every error with its path, and exit 1.
struct CheckConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config", abstract: "Check a configuration file and report every error with its path.")

    @Argument(help: "The YAML configuration file.")
    var file: String

    func run() throws {
        do {
            let configuration = try BridgeConfiguration.load(path: file)
            for warning in SecretFilePermissions.warnings(for: configuration) { printError("\(file): \(warning)") }
            print(
                "\(file): valid (\(configuration.devices.count) devices, peripheral \(configuration.peripheral == nil ? "off" : "on"))"
            )
        } catch {
            for problem in error.errors { printError("\(file): \(problem)") }
            throw ExitCode(1)
        }
    }
}

func printError(_ line: String) {
    var standardError = StandardError()
    print(line, to: &standardError)
}

struct StandardError: TextOutputStream {
    mutating func write(_ string: String) {
        var bytes = Array(string.utf8)
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
            if written <= 0 { return }
            bytes.removeFirst(written)
        }
    }
}
