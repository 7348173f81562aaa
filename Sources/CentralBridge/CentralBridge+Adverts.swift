import BluetoothCore
import BridgeCore
import MQTTCore

extension CentralBridge {
    /// A tracked device's advert changed: publish it now, or once its minimum interval has passed.
    func advertChanged(_ path: String) {
        decodeAdvert(path)
        guard devices[path] != nil, let state = tree.devices[path] else { return }
        let action = devices[path]!.adverts.advertChanged(Self.advertPayload(state), at: clock.now)
        perform(action, ofAdvertOf: path)
    }

    private func perform(_ action: AdvertThrottle<BridgeClock.Instant>.Action, ofAdvertOf path: String) {
        guard let device = devices[path] else { return }
        switch action {
        case .publish(let payload):
            // In a fleet only the owner publishes; it publishes the newest advert when it starts owning.
            guard fleetAllows(path) else { return }
            outbox.send(
                MQTTMessage(topic: routes.advertTopic(device.topic), payload: payload, qos: .atMostOnce, retain: true))
        case .scheduleFlush(let wait):
            spawn(forDevice: path) {
                try? await self.clock.sleep(for: wait)  // cancelled only when the bridge stops: nothing left to publish
                await self.flushAdvert(path)
            }
        case .none:
            break
        }
    }

    private func flushAdvert(_ path: String) {
        guard devices[path] != nil else { return }
        perform(devices[path]!.adverts.flushTimerFired(at: clock.now), ofAdvertOf: path)
    }

    /// The advert JSON of a device as BlueZ last described it (see ``AdvertPayload``).
    static func advertPayload(_ state: BLEDeviceState) -> [UInt8] {
        AdvertPayload(
            address: state.address?.description, rssi: state.rssi.map(Int.init), name: state.name, alias: state.alias,
            txPower: state.txPower.map(Int.init), manufacturerData: state.manufacturerData,
            serviceData: state.serviceData
        ).json
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
