import BluetoothCore
import BridgeCore
import CoreMetrics
import Logging
import MQTTCore

extension CentralBridge {
    /// Starts the connect → resolve → subscribe → wait for loss → back off loop of a device, once.
    func startLink(_ path: String) {
        guard var device = devices[path], !device.linkRunning, !shuttingDown, fleetAllows(path) else { return }
        device.linkRunning = true
        devices[path] = device
        spawn(forDevice: path) { await self.runLink(path) }
    }

    /// The link loop of an `always` device, its decisions taken by `DeviceLinkStateMachine`: connect, wait for
    /// the loss, say offline, back off, connect again. InProgress refusals are retried per operation
    /// (`retryingInProgress`), so here every failure counts as one.
    private func runLink(_ path: String) async {
        let bluetooth = configuration.bluetooth
        var link = DeviceLinkStateMachine<BridgeClock.Instant>(
            policy: .always,
            backoff: JitteredBackoff(initial: bluetooth.reconnectInitial, maximum: bluetooth.reconnectMax),
            inProgressBackoff: JitteredBackoff(initial: .milliseconds(50), maximum: .milliseconds(800)),
            maxInProgressRetries: 0, available: devices[path]?.online ?? false)
        defer { devices[path]?.linkRunning = false }
        // Actions run in the order the machine gave them; an event's actions go before anything queued after it.
        var actions = link.connectRequested()
        // In a fleet the loop ends once another gateway owns the device.
        while !actions.isEmpty, !Task.isCancelled, !shuttingDown, fleetAllows(path), let device = devices[path] {
            let action = actions.removeFirst()
            switch action {
            case .connect:
                do {
                    try await establish(path)
                    fleetLinkEstablished(path)
                    // For an `always` link success only says online; it must be said before the wait below.
                    for case .publishAvailability(let online) in link.connectSucceeded(at: clock.now) {
                        publishAvailability(path, online: online)
                    }
                    // Connected and subscribed: wait for the link to drop (the tree tells), without a deadline.
                    try await waitForDevice(path, timeout: nil) { !($0?.connected ?? false) }
                    actions += link.linkLost()
                } catch is CancellationError {
                    return
                } catch {
                    let failure = Self.failure(from: error)
                    logger.info(
                        "device.connect.failed",
                        metadata: ["device.name": "\(device.topic)", "error": "\(failure.name): \(failure.message)"])
                    publishEvent(type: "device_connect_failed", device: device.topic, error: failure)
                    fleetLinkFailed(path)
                    actions += link.connectFailed(.failed)
                }
            case .publishAvailability(online: true):
                publishAvailability(path, online: true)
            case .publishAvailability(online: false):
                linkLost(path)  // sockets closed, the loss reported, offline published
            case .retryConnect(let delay):
                guard !shuttingDown else { return }
                try? await self.clock.sleep(for: delay)  // cancelled only when the bridge stops
                actions += link.retryTimerFired()
            case .startIdleTimer, .disconnect, .none:
                break  // `always` links neither idle out nor disconnect themselves
            }
        }
    }

    /// Connects the device (when needed), waits for its GATT tree and subscribes to its notifications.
    func establish(_ path: String) async throws {
        guard let device = devices[path] else {
            throw CommandFailure.gattway("DeviceUnavailable", "device is no longer tracked")
        }
        let bluetooth = configuration.bluetooth
        if tree.devices[path] == nil {
            // Not heard of yet (or forgotten by bluetoothd): wait for an advertisement.
            try await waitForDevice(path, timeout: bluetooth.connectTimeout) { $0 != nil }
        }
        if !(tree.devices[path]?.connected ?? false) {
            await acquireConnectSlot()
            defer { releaseConnectSlot() }
            try await retryingInProgress {
                try await self.central.connect(device: path, timeout: bluetooth.connectTimeout)
            }
            metrics.connects.increment()
        }
        // GATT discovery continues after Connect replies: use the tree only once ServicesResolved is true.
        // (Connect's reply can overtake the signals that report the link, so wait for the state itself.)
        do {
            try await waitForDevice(path, timeout: bluetooth.connectTimeout) { $0?.servicesResolved ?? false }
        } catch {
            throw CommandFailure(
                name: BlueZErrorName.notConnected.rawValue,
                message: "services of \(device.topic) were not resolved within \(bluetooth.connectTimeout)")
        }
        // Characteristics that need encryption fail until the link is paired: pair first when configured to.
        if let pairing = configuration.devices[device.configIndex].pairing, !(tree.devices[path]?.paired ?? false) {
            try await pair(path, passkey: pairing.passkey)
        }
        try await subscribeNotifications(path)
        devices[path]?.lastActivity = clock.now
        store.rememberCharacteristics(of: device.address, paths: resolvedPaths(path))
        publishAvailability(path, online: true)
        logger.notice("device.online", metadata: ["device.name": "\(device.topic)"])
        publishEvent(type: "device_connected", device: device.topic)
        // In a task of its own: neither availability nor a waiting command waits for the name.
        spawn(forDevice: path) { await self.readDeviceName(path) }
        if case .onDemand = device.policy { scheduleIdleDisconnect(path) }
    }

    private func resolvedPaths(_ path: String) -> [String: String] {
        guard let device = devices[path] else { return [:] }
        var resolved: [String: String] = [:]
        for route in device.routes {
            if let characteristic = tree.characteristic(
                ofDevice: path, service: route.characteristic.service, uuid: route.characteristic.uuid)
            {
                resolved[route.characteristic.topicName] = characteristic.path
            }
        }
        return resolved
    }

    /// Subscribes to every configured notify characteristic: AcquireNotify first (a socket, no dbus-daemon hop per
    /// value), StartNotify (PropertiesChanged) when the characteristic or BlueZ refuses.
    private func subscribeNotifications(_ path: String) async throws {
        guard let device = devices[path] else { return }
        closeSockets(path)
        var resolved: [(route: CharacteristicRoute, characteristic: BLECharacteristicState)] = []
        for route in device.routes {
            guard
                let characteristic = tree.characteristic(
                    ofDevice: path, service: route.characteristic.service, uuid: route.characteristic.uuid)
            else {
                if route.characteristic.notify || route.characteristic.read || route.characteristic.write != nil {
                    logger.warning(
                        "device.characteristic.missing",
                        metadata: [
                            "device.name": "\(device.topic)", "characteristic": "\(route.characteristic.topicName)",
                        ])
                }
                continue
            }
            resolved.append((route, characteristic))
        }
        // Reads (`/get`) arrive as PropertiesChanged(Value) too, for every configured characteristic; the routes are
        // in place before the first StartNotify so that no early value is missed.
        values.setRoutes(
            Dictionary(resolved.map { ($0.characteristic.path, $0.route) }) { first, _ in first }, ofDevice: path)
        devices[path]?.notifyHangUps = 0
        for (route, characteristic) in resolved where route.characteristic.notify && characteristic.canNotify {
            try await subscribe(path, route: route, characteristicPath: characteristic.path, acquire: true)
        }
    }

    /// AcquireNotify when `acquire` (a socket, no dbus-daemon hop per value), else or when refused StartNotify.
    private func subscribe(
        _ path: String, route: CharacteristicRoute, characteristicPath: String, acquire: Bool
    ) async throws {
        guard let device = devices[path] else { return }
        let names: Logger.Metadata = [
            "device.name": "\(device.topic)", "characteristic": "\(route.characteristic.topicName)",
        ]
        if acquire {
            do {
                let publisher = NotificationPublisher(route: route, mqtt: mqtt, store: store, metrics: metrics)
                // The hang-up is seen on the MQTT client's loop; it reaches the bridge as a job of `run()`.
                let jobs = self.jobs
                let generation = device.socketGeneration
                let socket = try await central.acquireNotify(
                    characteristic: characteristicPath, timeout: .seconds(10), loop: mqtt.publishLoop,
                    onBatch: { batch in publisher.handle(batch) },
                    onClose: { [weak self] byPeer in
                        guard byPeer, let bridge = self else { return }
                        jobs?.yield {
                            await bridge.notifySocketHungUp(
                                path, generation: generation, route: route, characteristicPath: characteristicPath)
                        }
                    })
                publisher.attach(socket)
                devices[path]?.sockets.append(socket)
                // Values now arrive on the socket; a PropertiesChanged(Value) is then only a read's echo.
                logger.debug("device.notify.acquired", metadata: names)
                return
            } catch {
                logger.info("device.notify.fallback", metadata: names.merging(["error": "\(error)"]) { $1 })
            }
        }
        try await retryingInProgress {
            try await self.central.startNotify(characteristic: characteristicPath, timeout: .seconds(10))
        }
    }

    /// Sockets bluetoothd may close during one connection before StartNotify replaces AcquireNotify.
    static let maxNotifyHangUps = 3

    /// bluetoothd closed a notification socket while Gattway still wanted it. While the device stays connected the
    /// subscription is taken again; a device whose sockets keep hanging up is moved to StartNotify, so that a
    /// misbehaving peer cannot make this a loop.
    private func notifySocketHungUp(
        _ path: String, generation: Int, route: CharacteristicRoute, characteristicPath: String
    ) async {
        guard let device = devices[path] else { return }
        metrics.notifySocketHangUps.increment()
        // A socket of an earlier connection (closed by the link loss, or replaced since) needs nothing more.
        guard device.socketGeneration == generation else { return }
        devices[path]?.sockets.removeAll { $0.isClosed }
        guard device.online, tree.devices[path]?.connected ?? false, !shuttingDown else { return }
        let hangUps = (devices[path]?.notifyHangUps ?? 0) + 1
        devices[path]?.notifyHangUps = hangUps
        logger.info(
            "device.notify.hung_up",
            metadata: ["device.name": "\(device.topic)", "characteristic": "\(route.characteristic.topicName)"])
        do {
            try await subscribe(
                path, route: route, characteristicPath: characteristicPath, acquire: hangUps <= Self.maxNotifyHangUps)
        } catch {
            logger.info(
                "device.notify.resubscribe_failed",
                metadata: [
                    "device.name": "\(device.topic)", "characteristic": "\(route.characteristic.topicName)",
                    "error": "\(error)",
                ])
        }
    }

    /// Reads the GAP Device Name once per device, for `bridge/devices`. Best effort: a device without the GAP
    /// service, or one that refuses the read, keeps only its advertised name.
    private func readDeviceName(_ path: String) async {
        guard devices[path]?.deviceName == nil,
            let characteristic = tree.characteristic(
                ofDevice: path, service: BluetoothUUID.gapService, uuid: BluetoothUUID.gapDeviceName)
        else { return }
        do {
            let bytes = try await central.readValue(
                characteristic: characteristic.path, timeout: configuration.bluetooth.requestTimeout)
            devices[path]?.deviceName = DeviceNameText.text(of: bytes)
            markDevicesListDirty()
        } catch {
            logger.debug(
                "device.name.unreadable",
                metadata: ["device.name": "\(devices[path]?.topic ?? path)", "error": "\(error)"])
        }
    }

    /// The link dropped (or could not be completed): release its sockets and publish it offline.
    func linkLost(_ path: String) {
        guard let device = devices[path] else { return }
        closeSockets(path)
        if device.online {
            let reason = device.disconnectReason ?? "link_lost"
            logger.notice("device.offline", metadata: ["device.name": "\(device.topic)", "reason": "\(reason)"])
            metrics.disconnects.increment()
            publishEvent(type: "device_disconnected", device: device.topic, reason: reason)
        }
        devices[path]?.disconnectReason = nil
        publishAvailability(path, online: false)
    }

    func closeSockets(_ path: String) {
        devices[path]?.socketGeneration += 1
        guard let sockets = devices[path]?.sockets, !sockets.isEmpty else { return }
        for socket in sockets { socket.close() }
        devices[path]?.sockets = []
    }

    /// on_demand devices: disconnect after the idle timeout since the last command.
    func scheduleIdleDisconnect(_ path: String) {
        guard case .onDemand(let idle) = devices[path]?.policy else { return }
        spawn(forDevice: path) {
            try? await self.clock.sleep(for: idle)
            await self.disconnectIfIdle(path, idle: idle)
        }
    }

    private func disconnectIfIdle(_ path: String, idle: Duration) async {
        guard let device = devices[path], device.online, !device.commandWorkerRunning,
            device.lastActivity.duration(to: clock.now) >= idle
        else { return }
        closeSockets(path)
        devices[path]?.disconnectReason = "idle_timeout"
        try? await central.disconnect(device: path, timeout: .seconds(10))  // a failed disconnect shows as still online
    }

    /// Retries an operation that BlueZ refuses with InProgress (routine for concurrent GATT operations), a bounded
    /// number of times with jittered backoff.
    func retryingInProgress<T: Sendable>(_ operation: @Sendable () async throws -> T) async throws -> T {
        var backoff = JitteredBackoff(initial: .milliseconds(50), maximum: .milliseconds(800))
        for _ in 0..<5 {
            do { return try await operation() } catch let error as BlueZError where error.isInProgress {
                metrics.inProgressRetries.increment()
                try await self.clock.sleep(for: backoff.next())
            }
        }
        return try await operation()
    }

    static func failure(from error: any Error) -> CommandFailure {
        switch error {
        case let failure as CommandFailure: failure
        case let bluez as BlueZError:
            bluez.isTimeout
                ? CommandFailure.gattway("Timeout", "BlueZ did not answer in time (\(bluez.message))")
                : CommandFailure(name: bluez.name.rawValue, message: bluez.message)
        case is CancellationError: CommandFailure.gattway("Cancelled", "Gattway is stopping")
        default: CommandFailure.gattway("Failed", "\(error)")
        }
    }
}
