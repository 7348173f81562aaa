import BluetoothCore
import BridgeCore
import Logging
import MQTTCore
import Metrics

extension CentralBridge {
    /// Decodes a tracked device's advertisement with its configured decoder and publishes the measurements as one
    /// JSON object on `<device>/state` (retained), when they changed and at most once per
    /// `bluetooth.advert_min_interval`. Unchanged advertised data is not decoded again, nor is a packet id already
    /// seen; a packet that does not decode is counted by reason and logged at a limited rate.
    func decodeAdvert(_ path: String) {
        guard let device = devices[path], let state = tree.devices[path] else { return }
        let configured = configuration.devices[device.configIndex]
        guard configured.decoder != .none else { return }
        let input = DecodedAdvertInput(
            manufacturerData: state.manufacturerData, serviceData: state.serviceData, name: state.name)
        guard input != device.lastDecodedAdvert else { return }
        devices[path]?.lastDecodedAdvert = input
        let facts = AdvertisementFacts(
            address: device.address, manufacturerData: state.manufacturerData,
            serviceDataByUUIDText: state.serviceData, localName: state.name)
        let context = DecodingContext(bindkey: bindkeys[device.configIndex], openAESCCM: openAESCCM)
        let decoded: DecodedAdvertisement
        do {
            guard let result = try configured.decoder.decode(facts, context: context) else { return }
            decoded = result
        } catch {
            Counter(label: "gattway.central.adverts_undecodable", dimensions: [("reason", "\(error.code)")]).increment()
            if case .log = refusals.report("\(error.code)", topic: device.topic, at: started.duration(to: clock.now)) {
                logger.info(
                    "device.advert.undecodable", metadata: ["device.name": "\(device.topic)", "error": "\(error)"])
            }
            return
        }
        // A new packet (its data changed) whose encryption counter does not advance is a replay.
        if let counter = decoded.encryptionCounter,
            !encryptionCounters.accept(packetID: counter, from: device.address, at: clock.now)
        {
            Counter(label: "gattway.central.adverts_undecodable", dimensions: [("reason", "replayed")]).increment()
            return
        }
        if let id = decoded.packetID, !packetIDs.accept(packetID: id, from: device.address, at: clock.now) { return }
        homeAssistantMeasurementsDecoded(path, decoded)
        devices[path]?.pendingStatePayload = decoded.stateJSON
        publishState(path)
    }

    /// Publishes the newest decoded state when it differs from the last one published, now or once the minimum
    /// interval since the last publication has passed (the newest state wins).
    private func publishState(_ path: String) {
        guard let device = devices[path], let payload = device.pendingStatePayload else { return }
        guard payload != device.lastStatePayload else {
            devices[path]?.pendingStatePayload = nil
            return
        }
        let interval = configuration.bluetooth.advertMinInterval
        let now = clock.now
        if let last = device.lastStatePublished, last.duration(to: now) < interval {
            guard !device.stateFlushScheduled else { return }
            devices[path]?.stateFlushScheduled = true
            let wait = interval - last.duration(to: now)
            spawn(forDevice: path) {
                try? await self.clock.sleep(for: wait)
                await self.flushState(path)
            }
            return
        }
        devices[path]?.lastStatePublished = now
        devices[path]?.lastStatePayload = payload
        devices[path]?.pendingStatePayload = nil
        // In a fleet only the owner publishes; it publishes the last state when it starts owning.
        guard fleetAllows(path) else { return }
        outbox.send(
            MQTTMessage(topic: routes.stateTopic(device.topic), payload: payload, qos: .atLeastOnce, retain: true))
    }

    private func flushState(_ path: String) {
        devices[path]?.stateFlushScheduled = false
        publishState(path)
    }
}
