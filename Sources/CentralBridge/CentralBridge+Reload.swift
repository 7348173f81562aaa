import BluetoothCore
package import BridgeCore
import Logging
import MQTTCore

extension CentralBridge {
    /// Applies a reloaded configuration's devices without touching the others: peripherals of unchanged entries
    /// keep their links, values and subscriptions; those of removed or changed entries are let go (disconnected,
    /// published offline, their queued commands answered); new and changed entries pick up what matches them.
    /// Sections other than `devices` only change on restart; the `configuration_reloaded` event names them.
    package func reload(_ new: BridgeConfiguration, bindkeys newBindkeys: [Int: Bindkey] = [:]) async {
        let reload = ConfigurationReload(running: configuration, new: new)
        let running = configuration
        configuration = reload.applied
        // Keyed by position in the new device list, read from the new file.
        bindkeys = newBindkeys
        routes = CentralRoutes(configuration: configuration)
        var released: [String] = []
        for (path, device) in devices {
            if let newIndex = reload.keptDevices[device.configIndex] {
                devices[path]?.configIndex = newIndex
                devices[path]?.routes = routes.routes(ofDevice: newIndex, deviceTopic: device.topic)
                registerAdverts(path)
            } else {
                released.append(device.topic)
                await release(path, because: "was removed from the configuration")
            }
        }
        pinConfiguredAddresses(previous: running)
        // The default batch follows the devices: an entry that may connect makes it short, so that its values are
        // read promptly; once none may, it is long again.
        if Self.advertPacing(configuration) != Self.advertPacing(running) {
            await central.paceAdverts(every: Self.advertPacing(configuration))
        }
        // Whatever bluetoothd knows of may match a new or changed entry.
        for path in tree.devices.keys where devices[path] == nil { deviceSeen(path) }
        // The first devices need discovery; without any, it is no longer needed.
        await ensureDiscovery()
        await stopDiscoveryIfUnneeded()
        outbox.send(
            MQTTMessage(topic: routes.bridge.bridgeInfo, payload: bridgeInfoPayload(), qos: .atLeastOnce, retain: true))
        markDevicesListDirty()
        logger.notice(
            "configuration.reloaded",
            metadata: [
                "devices.released": "\(released.sorted())", "devices.tracked": "\(devices.count)",
                "restart_needed": "\(reload.sectionsNeedingRestart)",
            ])
        publishReloadEvent(released: released.sorted(), restartNeeded: reload.sectionsNeedingRestart)
        homeAssistantReloaded()
    }

    /// A reload whose file does not validate: the running configuration stays, and operators hear why.
    package func reloadFailed(_ problems: [String]) {
        logger.error("configuration.reload_failed", metadata: ["errors": "\(problems.count)"])
        let event = BridgeEvent.configurationInvalid(problems: problems)
        outbox.send(MQTTMessage(topic: routes.bridgeEventTopic, payload: event.payload, qos: .atLeastOnce))
    }

    /// Lets go of a tracked peripheral: its entry is gone, or (for one found by `match`) it is no longer heard.
    func release(_ path: String, because reason: String) async {
        guard let device = devices[path] else { return }
        let connected = tree.devices[path]?.connected ?? false
        closeSockets(path)
        var commands = device.commands
        for command in commands.shutdown() {
            let route = device.routes[command.route]
            let reply = ReplyAddress(
                resultTopic: { if case .write = command.kind { route.setResultTopic } else { nil } }(),
                responseTopic: command.responseTopic, correlationData: command.correlationData,
                transaction: command.transaction)
            fail(reply, .gattway("DeviceReleased", "\(device.topic) \(reason)"))
        }
        publishAvailability(path, online: false)
        device.inbox?.finish()  // ends the device's task and cancels its link loop, commands and timers
        devices[path] = nil
        adverts.unregister(path)
        tracker.forget(path)
        // bluetoothd's object may be forgotten again (a configured address is pinned anew by its entry).
        tree.pinnedDevices.remove(path)
        values.setRoutes([:], ofDevice: path)
        let filters = device.routes.flatMap { [$0.setTopic, $0.getTopic] }
        subscribedFilters.subtract(filters)
        logger.notice("device.released", metadata: ["device.name": "\(device.topic)", "reason": "\(reason)"])
        let central = self.central
        let logger = self.logger
        let mqtt = self.mqtt
        spawn {
            for filter in filters {
                do { try await mqtt.unsubscribe(filter) } catch {
                    logger.info("mqtt.unsubscribe.failed", metadata: ["mqtt.topic": "\(filter)", "error": "\(error)"])
                }
            }
            guard connected else { return }
            do { try await central.disconnect(device: path, timeout: .seconds(10)) } catch {
                logger.info(
                    "device.disconnect.failed", metadata: ["device.name": "\(device.topic)", "error": "\(error)"])
            }
        }
    }

    /// Keeps bluetoothd's objects of configured addresses from being evicted, and frees those no longer configured.
    private func pinConfiguredAddresses(previous: BridgeConfiguration) {
        func pins(_ configuration: BridgeConfiguration) -> Set<String> {
            Set(
                configuration.devices.compactMap { device -> String? in
                    guard case .address(let address) = device.selector else { return nil }
                    return adapterPath + "/" + address.bluezPathComponent
                })
        }
        let now = pins(configuration)
        for path in pins(previous).subtracting(now) where devices[path] == nil { tree.pinnedDevices.remove(path) }
        tree.pinnedDevices.formUnion(now)
    }

    /// A device's `lastHeard`, read through `inout`, in place (see `releaseUnheardDevices`).
    private static func lastHeard(_ device: inout TrackedDevice) -> BridgeClock.Instant { device.lastHeard }

    private func publishReloadEvent(released: [String], restartNeeded: [String]) {
        let event = BridgeEvent.configurationReloaded(
            released: released, tracked: devices.count, restartNeeded: restartNeeded)
        outbox.send(MQTTMessage(topic: routes.bridgeEventTopic, payload: event.payload, qos: .atLeastOnce))
    }

    /// Frees the tracking slots of `match` devices no longer heard: an advertiser that came and went (or faked a
    /// match once) must not hold a slot for good. Configured addresses stay tracked.
    ///
    /// Runs every 2 s without syncing first (see `syncAdverts`): applying every heard device's newest advertised
    /// data to the tree at each sweep took 5 % of Gattway's instructions with a thousand passive advertisers, and
    /// the tree needs that data only when the actor reads it, which syncs. A device the actor last heard longer ago
    /// than the timeout is asked of the advert path instead, which took its reports if anyone did.
    func releaseUnheardDevices() async {
        let now = clock.now
        let timeout = configuration.bluetooth.unheardTimeout
        var stale: [String] = []
        // By index, not over `indices`, which holds the dictionary's storage: the first change below would then
        // copy every device.
        var index = devices.startIndex
        while index != devices.endIndex {
            defer { devices.formIndex(after: &index) }
            // Read in place (`Self.lastHeard` takes the device inout): the subscript's getter copied the whole device
            // out, retaining a dozen references, for every device on every sweep.
            guard Self.lastHeard(&devices.values[index]).duration(to: now) >= timeout else { continue }
            let device = devices.values[index]
            guard case .match = configuration.devices[device.configIndex].selector else { continue }
            if let heard = adverts.lastReport(of: device.path), heard > device.lastHeard {
                devices.values[index].lastHeard = heard
                guard heard.duration(to: now) >= timeout else { continue }
            }
            // A passive device is "online" only while heard; a connectable one must also have no link.
            let passive: Bool = if case .never = device.policy { true } else { false }
            if (passive || !device.online) && device.commands.isIdle
                && !(tree.devices[device.path]?.connected ?? false)
            {
                stale.append(device.path)
            }
        }
        guard !stale.isEmpty else { return }
        syncAdverts()
        for path in stale {
            await release(path, because: "was not heard for \(timeout)")
        }
        markDevicesListDirty()
    }
}
