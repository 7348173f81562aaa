import Metrics
import Prometheus

/// The Prometheus side of the metrics: a registry and the swift-metrics factory that fills it.
///
/// Gattway's labels (`gattway.central.notifications`) become Prometheus names by replacing what Prometheus does
/// not allow with `_`, and counters take the `_total` suffix Prometheus expects of them
/// (`gattway_central_notifications_total`); dimensions become labels. Counters stay counters, meters and
/// non-aggregating recorders are gauges, timers and aggregating recorders histograms.
struct PrometheusExport: Sendable {
    let registry = PrometheusCollectorRegistry()
    let factory: CounterSuffixingFactory

    init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.nameAndLabelSanitizer = { label, dimensions in
            (Self.prometheusName(label), dimensions.map { (Self.prometheusName($0.0), $0.1) })
        }
        self.factory = CounterSuffixingFactory(base: factory)
    }

    /// `[a-zA-Z_:][a-zA-Z0-9_:]*`: everything else becomes `_`.
    static func prometheusName(_ label: String) -> String {
        var name = String(
            label.unicodeScalars.map { scalar -> Character in
                let allowed =
                    (scalar.value < 0x80)
                    && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_"
                        || scalar == ":")
                return allowed ? Character(scalar) : "_"
            })
        if let first = name.unicodeScalars.first, ("0"..."9").contains(first) { name = "_" + name }
        return name
    }
}

/// Appends `_total` to every counter's name, as Prometheus names counters; everything else passes unchanged.
struct CounterSuffixingFactory: MetricsFactory {
    let base: PrometheusMetricsFactory

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        base.makeCounter(label: label + "_total", dimensions: dimensions)
    }

    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        base.makeFloatingPointCounter(label: label + "_total", dimensions: dimensions)
    }

    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        base.makeMeter(label: label, dimensions: dimensions)
    }

    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        base.makeRecorder(label: label, dimensions: dimensions, aggregate: aggregate)
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        base.makeTimer(label: label, dimensions: dimensions)
    }

    func destroyCounter(_ handler: any CounterHandler) { base.destroyCounter(handler) }
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {
        base.destroyFloatingPointCounter(handler)
    }
    func destroyMeter(_ handler: any MeterHandler) { base.destroyMeter(handler) }
    func destroyRecorder(_ handler: any RecorderHandler) { base.destroyRecorder(handler) }
    func destroyTimer(_ handler: any TimerHandler) { base.destroyTimer(handler) }
}
