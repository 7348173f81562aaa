import BluetoothCore
import BridgeCore
import CoreMetrics
import Logging
import MQTTCore
import Synchronization

/// Publishes characteristic values that arrive as PropertiesChanged (StartNotify notifications and the echo of
/// reads) to their value topics.
///
/// It is called on the D-Bus connection's loop, straight from the signal tap, so a value costs no hop through the
/// bridge actor or the task pool: it is decoded there and handed to the outbox, which publishes on the MQTT
/// client's loop (in place, when the daemon runs the D-Bus connection on that loop). The bridge actor keeps the
/// routes up to date as devices subscribe.
final class ValueRelay: Sendable {
    private struct Routes {
        /// Characteristic object path → its route.
        var byCharacteristic: [String: CharacteristicRoute] = [:]
        /// Device object path → the characteristic paths registered for it.
        var byDevice: [String: [String]] = [:]
        /// The route found last. Values come in runs from one characteristic, and comparing a path with the last
        /// one costs a tenth of hashing it (a path is about 50 bytes).
        /// Two fields, not an optional tuple, so that the comparison borrows them instead of copying the pair.
        var lastPath = ""
        var lastRoute: CharacteristicRoute?

        mutating func route(of path: String) -> CharacteristicRoute? {
            if lastRoute != nil, lastPath == path { return lastRoute }
            guard let route = byCharacteristic[path] else { return nil }
            lastPath = path
            lastRoute = route
            return route
        }
    }

    private let routes = Mutex(Routes())
    private let outbox: Outbox
    private let store: CentralStateStore
    private let metrics: CentralMetrics
    private let logger: Logger

    init(outbox: Outbox, store: CentralStateStore, metrics: CentralMetrics, logger: Logger) {
        self.outbox = outbox
        self.store = store
        self.metrics = metrics
        self.logger = logger
    }

    /// Replaces the routes of `devicePath`'s characteristics (characteristic path → route).
    func setRoutes(_ characteristics: [String: CharacteristicRoute], ofDevice devicePath: String) {
        routes.withLock { routes in
            for path in routes.byDevice[devicePath] ?? [] { routes.byCharacteristic[path] = nil }
            routes.byDevice[devicePath] = Array(characteristics.keys)
            routes.byCharacteristic.merge(characteristics) { $1 }
            routes.lastRoute = nil
        }
    }

    /// Publishes `value` of the characteristic at `path`; false when no route is registered for it.
    @discardableResult
    func relay(_ value: [UInt8], ofCharacteristic path: String) -> Bool {
        guard let route = routes.withLock({ $0.route(of: path) }) else { return false }
        guard let message = ValuePipeline(route: route, store: store, metrics: metrics).message(for: value) else {
            logger.trace("value.not_published", metadata: ["mqtt.topic": "\(route.valueTopic)"])
            return true
        }
        metrics.notifications.increment()
        outbox.send(message)
        return true
    }
}
