import BluetoothCore
import BridgeCore
import MQTTCore

extension CentralBridge {
    /// How long the stack may gather advertisement reports (see `BLECentral.paceAdverts`): `advert_batch` (or its
    /// default for these devices), but never longer than `advert_min_interval`, so that a device allowed to publish
    /// every millisecond still has each of its readings published (reports gathered together would otherwise fall
    /// within one interval, and only the newest of them would be). nil: no batching.
    static func advertPacing(_ configuration: BridgeConfiguration) -> Duration? {
        let batch = min(configuration.advertBatch, configuration.bluetooth.advertMinInterval)
        return batch > .zero ? batch : nil
    }

    /// A tracked device's advert changed (as the actor's tree tells): publish it and its decoded state now, or
    /// once the minimum interval has passed. Passive devices' reports mostly take the D-Bus loop's path instead
    /// (see ``AdvertPublisher``).
    func advertChanged(_ path: String) {
        guard devices[path] != nil, let state = tree.devices[path] else { return }
        perform(adverts.advertChanged(path, state: state, mayPublish: fleetAllows(path)), ofDevice: path)
    }

    /// Carries out what the advert publisher left to the actor.
    func perform(_ followUps: [AdvertPublisher.FollowUp], ofDevice path: String) {
        guard devices[path] != nil else { return }
        for followUp in followUps {
            switch followUp {
            case .flushAdvert(let wait):
                spawn(forDevice: path) {
                    try? await self.clock.sleep(for: wait)  // cancelled only when the device or bridge stops
                    await self.flushAdvert(path)
                }
            case .flushState(let wait):
                spawn(forDevice: path) {
                    try? await self.clock.sleep(for: wait)
                    await self.flushState(path)
                }
            case .measurementsDecoded(let decoded):
                homeAssistantMeasurementsDecoded(path, decoded)
            }
        }
    }

    private func flushAdvert(_ path: String) {
        guard devices[path] != nil else { return }
        adverts.flushAdvert(path, mayPublish: fleetAllows(path))
    }

    private func flushState(_ path: String) {
        guard devices[path] != nil else { return }
        perform(adverts.flushState(path, mayPublish: fleetAllows(path)), ofDevice: path)
    }

    /// Starts (or, after a reload, updates) publishing the adverts of the tracked device at `path`.
    func registerAdverts(_ path: String) {
        guard let device = devices[path], let state = tree.devices[path] else { return }
        let configured = configuration.devices[device.configIndex]
        let passive = if case .never = configured.connect { true } else { false }
        let registration = AdvertPublisher.Registration(
            address: device.address, deviceTopic: device.topic, advertTopic: routes.advertTopic(device.topic),
            stateTopic: routes.stateTopic(device.topic), decoder: configured.decoder,
            bindkey: bindkeys[device.configIndex],
            // A passive device's reports, and a connected device's (it may keep advertising, and while its link is
            // up an advertisement changes nothing but what is published), are taken on the D-Bus loop. Without a
            // link, hearing a connectable device is the actor's to act on. In a fleet every report also feeds the
            // ownership protocol (RSSI per device): those stay the actor's.
            takesReports: fleet == nil && (passive || state.connected))
        adverts.register(path, registration, state: state)
    }

    /// Applies to the tree what the D-Bus loop's advert path took since: the newest advertised data and RSSI of
    /// each passive device, and when it was heard. Called before the actor reads the tree or handles an event, so
    /// it never acts on older data than the advert path published.
    func syncAdverts() {
        for unsynced in adverts.takeUnsynced() {
            let state = unsynced.state
            _ = tree.deviceChanged(
                path: unsynced.path,
                [
                    .rssi(state.rssi), .txPower(state.txPower), .manufacturerData(state.manufacturerData),
                    .serviceData(state.serviceData),
                ])
            guard let index = devices.index(forKey: unsynced.path) else { continue }
            // Through the index, in place: `devices[path]?.lastHeard = …` copied the whole device out to a
            // heap-allocated accessor frame and back, for each device heard since the last sync.
            devices.values[index].lastHeard = unsynced.heard
            _ = tracker.heard(unsynced.path, byAddress: false, at: unsynced.heard)
        }
    }

    /// `bridge/devices` changes at most once a second.
    func markDevicesListDirty() {
        devicesListDirty = true
        guard !devicesListFlushScheduled else { return }
        devicesListFlushScheduled = true
        spawn {
            try? await self.clock.sleep(for: .milliseconds(500))
            await self.publishDevicesList()
        }
    }

    private func publishDevicesList() {
        devicesListFlushScheduled = false
        guard devicesListDirty else { return }
        devicesListDirty = false
        outbox.send(
            MQTTMessage(
                topic: routes.bridgeDevicesTopic, payload: devicesListPayload(), qos: .atLeastOnce, retain: true))
    }

    func devicesListPayload() -> [UInt8] {
        syncAdverts()
        var writer = JSONWriter(reservingCapacity: 256)
        writer.beginArray()
        for device in devices.values.sorted(by: { $0.topic < $1.topic }) {
            let state = tree.devices[device.path]
            writer.beginObject()
            writer.field("name", device.topic)
            writer.field("address", device.address.description)
            writer.field("connect", Self.policyName(device.policy))
            writer.field("connected", state?.connected ?? false)
            writer.field("available", device.online)
            if let rssi = state?.rssi { writer.field("rssi", Int(rssi)) }
            if let name = device.deviceName { writer.field("device_name", name) }
            writer.endObject()
        }
        writer.endArray()
        return writer.bytes
    }

    static func policyName(_ policy: DeviceConfiguration.ConnectPolicy) -> String {
        switch policy {
        case .always: "always"
        case .onDemand: "on_demand"
        case .never: "never"
        }
    }
}
