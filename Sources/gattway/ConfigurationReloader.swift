import BridgeCore
import CentralBridge
import Logging
import ServiceLifecycle
import UnixSignals

/// `systemctl reload gattway` (SIGHUP): reads the configuration file again and hands its devices to the central
/// bridge. A file that does not validate changes nothing; its errors go to the log and to `bridge/event`.
struct ConfigurationReloader: Service {
    let path: String
    let central: CentralBridge
    let logger: Logger

    func run() async throws {
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        await cancelWhenGracefulShutdown {
            for await _ in hangups {
                await reload()
            }
        }
    }

    private func reload() async {
        logger.notice("configuration.reloading", metadata: ["config": "\(path)"])
        do {
            await central.reload(try BridgeConfiguration.load(path: path))
        } catch {
            let problems = error.errors.map(\.description)
            for problem in problems { logger.error("configuration.invalid", metadata: ["problem": "\(problem)"]) }
            await central.reloadFailed(problems)
        }
    }
}
