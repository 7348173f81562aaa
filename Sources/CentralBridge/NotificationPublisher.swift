import BluetoothCore
import BridgeCore
import CoreMetrics
import Logging
import MQTTCore
import Polling

/// Publishes the notifications of one AcquireNotify socket to the characteristic's value topic.
///
/// The hot path: the socket is read on the MQTT client's own loop and each batch is decoded and handed to
/// libmosquitto right there (`publishOnLoop`), with no hop through the bridge actor or the task pool. When the
/// client has no capacity (outstanding QoS 1 publishes at their bound, or a full output buffer) the rest of the
/// batch waits here and the socket pauses until capacity returns.
///
/// @unchecked Sendable: `pending`, `socket` and `resumeWanted` are only touched on the MQTT client's loop (the socket's event
/// handler and the client's capacity callback both run there).
final class NotificationPublisher: @unchecked Sendable {
    private let route: CharacteristicRoute
    private let mqtt: any MQTTClient
    private let metrics: CentralMetrics
    private var socket: (any BLENotificationChannel)?
    /// Capacity returned before `attach` ran: the channel is resumed as soon as it is attached.
    private var resumeWanted = false
    /// Decoded messages the client had no room for yet, from `pendingStart` on. One array kept between batches:
    /// emptied, not replaced, so a notification allocates no array of messages.
    private var pending: [MQTTMessage] = []
    private var pendingStart = 0
    private let pipeline: ValuePipeline

    init(route: CharacteristicRoute, mqtt: any MQTTClient, store: CentralStateStore, metrics: CentralMetrics) {
        self.route = route
        self.mqtt = mqtt
        self.metrics = metrics
        pipeline = ValuePipeline(route: route, store: store, metrics: metrics)
    }

    /// Attaches the channel whose batches `handle` receives, so that a paused channel can be resumed. Runs on the
    /// MQTT client's loop, in order with the batches; a resume asked for before the channel was attached happens
    /// here.
    func attach(_ channel: any BLENotificationChannel) {
        mqtt.publishLoop.execute { [self] in
            socket = channel
            if resumeWanted {
                resumeWanted = false
                channel.resume()
            }
        }
    }

    /// Runs on the MQTT client's loop (the channel's `onBatch`). Returns false to pause the channel.
    func handle(_ batch: [[UInt8]]) -> Bool {
        pipeline.appendMessages(for: batch, to: &pending)
        return publishPending()
    }

    /// Offers what is pending to the client; true when all of it was taken.
    private func publishPending() -> Bool {
        guard pendingStart < pending.count else { return true }
        let result = mqtt.publishOnLoop(pending[pendingStart...]) { [self] in
            guard self.publishPending() else { return }
            if let socket = self.socket { socket.resume() } else { self.resumeWanted = true }
        }
        pendingStart += result.taken
        metrics.notifications.increment(by: result.taken - result.failed)
        if result.failed > 0 { metrics.notificationsDropped.increment(by: result.failed) }
        guard pendingStart == pending.count else { return false }
        pending.removeAll(keepingCapacity: true)
        pendingStart = 0
        return true
    }
}
