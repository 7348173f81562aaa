import BluetoothCore
import BridgeCore
import Logging
import MQTTCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension CentralBridge {
    /// `bridge/request/<verb>` → `bridge/response/<verb>` (and the MQTT 5 Response Topic), echoing `transaction`.
    ///
    /// Payloads: `{"device": "<name or address>", "transaction": …}` for connect / disconnect / remove / unpair,
    /// plus `"passkey"` (0…999999) for pair; `{"duration": seconds}` for scan (default 10, at most 300); anything
    /// (or nothing) for devices.
    func handleBridgeRequest(verb: String, message: MQTTMessage) async {
        let body = (try? JSONValue(parsing: message.payload)) ?? .object([])
        let reply = ReplyAddress(
            resultTopic: routes.bridgeResponseTopic(verb), responseTopic: message.properties.responseTopic,
            correlationData: message.properties.correlationData, transaction: body["transaction"])
        switch verb {
        case "devices":
            let list = devicesListPayload()
            succeed(reply) { writer in
                writer.key("devices")
                writer.rawValue(list)
            }
        case "scan":
            let seconds = body["duration"]?.doubleValue ?? 10
            guard seconds > 0, seconds <= 300 else {
                return fail(reply, .gattway("InvalidRequest", "duration must be between 0 and 300 seconds"))
            }
            let session: Int
            let window: Duration
            switch scans.start(duration: .seconds(seconds), at: clock.now) {
            case .refused(let running):
                return fail(reply, .gattway("Busy", "\(running) scans are already running; try again later"))
            case .started(let id, let endsAfter):
                (session, window) = (id, endsAfter)
            }
            await ensureDiscovery()
            // Answer once the scan window has passed, with what BlueZ heard (the strongest first, at most 200).
            spawn {
                try? await self.clock.sleep(for: window)  // cancelled only when the bridge stops
                await self.answerScan(reply, session: session)
                await self.stopDiscoveryIfUnneeded()
            }
        case "connect", "disconnect", "remove", "pair", "unpair":
            guard let name = body["device"]?.stringValue ?? (body.isObject ? nil : message.payloadText),
                let path = devicePath(named: name)
            else {
                let named = body["device"]?.stringValue.map { Array($0.utf8) } ?? message.payload
                return fail(
                    reply, .gattway("UnknownDevice", "no tracked device is named \(PayloadExcerpt.quote(named))"))
            }
            // A connect may take the whole connect timeout: it runs in a task of its own, so that the command
            // topics (read by the same consumer) never wait for it.
            guard requestsInFlight < Self.maxRequestsInFlight else {
                return fail(
                    reply, .gattway("Busy", "\(requestsInFlight) requests are already running; try again later"))
            }
            var passkey: UInt32?
            if verb == "pair" {
                switch Self.passkey(in: body) {
                case .success(let value): passkey = value
                case .failure(let failure): return fail(reply, failure)
                }
            }
            requestsInFlight += 1
            spawn { [passkey] in
                await self.perform(verb, on: path, passkey: passkey, reply: reply)
                await self.requestFinished()
            }
        default:
            fail(reply, .gattway("UnknownRequest", "unknown bridge request \(verb)"))
        }
    }

    /// Bridge requests (connect, disconnect, remove) running at once; more get a `Busy` answer.
    static let maxRequestsInFlight = 8
    /// Scan windows open at once; each holds a task until its answer.
    static let maxScansInFlight = 4

    private func requestFinished() { requestsInFlight -= 1 }

    private func answerScan(_ reply: ReplyAddress, session: Int) {
        guard scans.ended(session) else { return }
        syncAdverts()
        let heard = tree.devices.values.sorted { ($0.rssi ?? -128) > ($1.rssi ?? -128) }.prefix(200)
        succeed(reply) { writer in
            writer.field("discovering", self.discovering)
            writer.key("devices")
            writer.beginArray()
            for device in heard {
                writer.beginObject()
                if let address = device.address { writer.field("address", address.description) }
                if let name = device.name { writer.field("name", name) }
                if let rssi = device.rssi { writer.field("rssi", Int(rssi)) }
                if let tracked = self.devices[device.path] { writer.field("tracked_as", tracked.topic) }
                writer.endObject()
            }
            writer.endArray()
        }
    }

    private func devicePath(named name: String) -> String? {
        let trimmed = name.trimmingWhitespace()
        return devices.values.first { $0.topic == trimmed || $0.address.description == trimmed.uppercased() }?.path
    }

    private func perform(_ verb: String, on path: String, passkey: UInt32?, reply: ReplyAddress) async {
        guard let device = devices[path] else { return }
        do {
            switch verb {
            case "connect":
                if case .never = device.policy {
                    throw CommandFailure.gattway("NotConnectable", "\(device.topic) is configured with connect: never")
                }
                try await establish(path)
            case "pair":
                if case .never = device.policy {
                    throw CommandFailure.gattway("NotConnectable", "\(device.topic) is configured with connect: never")
                }
                try await pair(path, passkey: passkey)
            case "unpair":
                try await unpair(path)
            case "disconnect":
                closeSockets(path)
                devices[path]?.disconnectReason = "requested"
                try await central.disconnect(device: path, timeout: .seconds(10))
            default:
                closeSockets(path)
                publishAvailability(path, online: false)
                devices[path]?.inbox?.finish()  // ends the device's own task and what runs in it
                devices[path] = nil
                adverts.unregister(path)
                tracker.forget(path)
                values.setRoutes([:], ofDevice: path)
                tree.pinnedDevices.remove(path)
                store.forget(address: device.address)
                try await central.removeDevice(adapter: adapterPath, device: path)
                markDevicesListDirty()
            }
            succeed(reply) { $0.field("device", device.topic) }
        } catch {
            fail(reply, Self.failure(from: error))
        }
    }
}
