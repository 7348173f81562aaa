import BridgeCore
import CentralBridge
import Logging
import ServiceLifecycle
import UnixSignals

/// `systemctl reload gattway` (SIGHUP): reads the configuration file again and hands its devices to the central
/// bridge. A file that does not validate changes nothing; its errors go to the log and to `bridge/event`.
struct ConfigurationReloader: Service, CustomStringConvertible {
    /// The name ServiceLifecycle logs it by (without one it would describe every stored property by reflection).
    var description: String { "configuration reloader" }

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
        let configuration: BridgeConfiguration
        do {
            configuration = try BridgeConfiguration.load(path: path)
        } catch {
            let problems = error.errors.map(\.description)
            for problem in problems { logger.error("configuration.invalid", metadata: ["problem": "\(problem)"]) }
            await central.reloadFailed(problems)
            return
        }
        do {
            // Bindkeys are read again too: a device may be new, moved in the list, or have a new key.
            await central.reload(configuration, bindkeys: try BindkeyLoader.load(configuration.devices))
        } catch {
            logger.error("configuration.invalid", metadata: ["problem": "\(error)"])
            await central.reloadFailed([error.description])
        }
    }
}
