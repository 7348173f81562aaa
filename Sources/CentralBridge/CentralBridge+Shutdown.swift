import BluetoothCore
import BridgeCore
import Logging
import MQTTCore

extension CentralBridge {
    // MARK: - Shutdown

    /// SIGTERM: disconnect every device, publish it offline, save state.
    func shutDown() async {
        shuttingDown = true
        logger.notice("bridge.stopping")
        // Commands still waiting are answered now; the ones in flight answer when their operation ends.
        for path in Array(devices.keys) {
            guard let device = devices[path], let waiting = devices[path]?.commands.shutdown() else { continue }
            for command in waiting {
                fail(
                    replyAddress(of: command, on: device),
                    .gattway("ShuttingDown", "gattway is stopping; the command was not run"))
            }
        }
        // All at once, each bounded: a device that does not answer holds up no other, and the whole stop stays short.
        var connected: [(path: String, topic: String)] = []
        for (path, device) in devices where device.online || (tree.devices[path]?.connected ?? false) {
            closeSockets(path)
            devices[path]?.disconnectReason = "stopping"
            connected.append((path, device.topic))
        }
        let central = self.central
        let logger = self.logger
        await withTaskGroup(of: Void.self) { group in
            for (path, topic) in connected {
                group.addTask {
                    do { try await central.disconnect(device: path, timeout: .seconds(5)) } catch {
                        logger.info(
                            "device.disconnect.failed", metadata: ["device.name": "\(topic)", "error": "\(error)"])
                    }
                }
            }
        }
        for path in devices.keys { publishAvailability(path, online: false) }
        for waiter in waiters.values { waiter.signal.fail(CancellationError()) }
        if discovering { try? await central.stopDiscovery(adapter: adapterPath) }
        store.save()
    }
}
