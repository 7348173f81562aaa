package import CoreMetrics
import Synchronization

/// A swift-metrics backend that keeps every metric in memory and renders all of them as one JSON document
/// (`<base>/bridge/metrics`), so that whoever runs a fleet reads Gattway's counters over the MQTT it already has.
///
/// Counters and floating-point counters add up; gauges (meters and non-aggregating recorders) keep their last
/// value; aggregating recorders and timers keep count, sum, minimum and maximum. A metric is named by its label, and
/// by its dimensions as `label{key=value,…}`. Asking again for the same name returns the same storage.
package final class MetricsSnapshotFactory: MetricsFactory, Sendable {
    private let cells = Mutex<[String: MetricCell]>([:])

    package init() {}

    package func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        cell(.counter, label, dimensions)
    }

    package func makeFloatingPointCounter(label: String, dimensions: [(String, String)])
        -> any FloatingPointCounterHandler
    {
        cell(.counter, label, dimensions)
    }

    package func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        cell(.gauge, label, dimensions)
    }

    package func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        cell(aggregate ? .distribution : .gauge, label, dimensions)
    }

    package func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        cell(.timer, label, dimensions)
    }

    package func destroyCounter(_ handler: any CounterHandler) { destroy(handler) }
    package func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) { destroy(handler) }
    package func destroyMeter(_ handler: any MeterHandler) { destroy(handler) }
    package func destroyRecorder(_ handler: any RecorderHandler) { destroy(handler) }
    package func destroyTimer(_ handler: any TimerHandler) { destroy(handler) }

    /// Every metric as JSON: `{"counters":{…},"distributions":{…},"gauges":{…},"timers":{…}}`, names sorted.
    package func snapshotJSON() -> [UInt8] {
        let all = cells.withLock { $0 }
        var snapshot = MetricsSnapshot()
        for kind in MetricCell.Kind.allCases { snapshot.kinds[kind.rawValue] = [:] }
        for (name, cell) in all { snapshot.kinds[cell.kind.rawValue, default: [:]][name] = cell.reading }
        return JSONPayload.encode(snapshot)
    }

    private func cell(_ kind: MetricCell.Kind, _ label: String, _ dimensions: [(String, String)]) -> MetricCell {
        let name = Self.name(label, dimensions)
        return cells.withLock { cells in
            if let existing = cells[name], existing.kind == kind { return existing }
            let created = MetricCell(kind: kind, name: name)
            cells[name] = created
            return created
        }
    }

    private func destroy(_ handler: AnyObject) {
        guard let cell = handler as? MetricCell else { return }
        cells.withLock { cells in
            if cells[cell.name] === cell { cells[cell.name] = nil }
        }
    }

    static func name(_ label: String, _ dimensions: [(String, String)]) -> String {
        guard !dimensions.isEmpty else { return label }
        return label + "{" + dimensions.map { "\($0.0)=\($0.1)" }.joined(separator: ",") + "}"
    }
}

/// One metric's storage; it serves as every kind of handler, its `kind` saying how it is read.
final class MetricCell: CounterHandler, FloatingPointCounterHandler, MeterHandler, RecorderHandler, TimerHandler,
    Sendable
{
    enum Kind: String, CaseIterable {
        case counter = "counters"
        case gauge = "gauges"
        case distribution = "distributions"
        case timer = "timers"
    }

    private struct Values {
        var total: Double = 0
        var last: Double = 0
        var count: Int64 = 0
        var minimum: Double = .infinity
        var maximum: Double = -.infinity
    }

    let kind: Kind
    let name: String
    private let values = Mutex(Values())

    init(kind: Kind, name: String) {
        self.kind = kind
        self.name = name
    }

    func increment(by amount: Int64) { increment(by: Double(amount)) }
    func increment(by amount: Double) {
        values.withLock {
            $0.total += amount
            $0.last = $0.total
        }
    }
    func decrement(by amount: Double) {
        values.withLock {
            $0.total -= amount
            $0.last = $0.total
        }
    }
    func reset() { values.withLock { $0 = Values() } }
    func set(_ value: Int64) { set(Double(value)) }
    func set(_ value: Double) {
        values.withLock {
            $0.last = value
            $0.total = value
        }
    }
    func record(_ value: Int64) { record(Double(value)) }
    func record(_ value: Double) {
        values.withLock { values in
            values.last = value
            values.total += value
            values.count += 1
            values.minimum = min(values.minimum, value)
            values.maximum = max(values.maximum, value)
        }
    }
    func recordNanoseconds(_ duration: Int64) { record(Double(duration)) }

    /// What the cell holds now, as `bridge/metrics` shows it.
    var reading: MetricsSnapshot.Reading {
        let values = self.values.withLock { $0 }
        switch kind {
        case .counter: return .number(JSONNumber(values.total))
        case .gauge: return .number(JSONNumber(values.last))
        case .distribution, .timer:
            return .summary(
                count: values.count, sum: JSONNumber(values.total),
                minimum: JSONNumber(values.count > 0 ? values.minimum : 0),
                maximum: JSONNumber(values.count > 0 ? values.maximum : 0), unitSuffix: kind == .timer ? "_ns" : "")
        }
    }
}

/// The payload of `<base>/bridge/metrics` (`schemas/mqtt/bridge-metrics.schema.json`): each kind of metric, each by
/// name.
package struct MetricsSnapshot: Encodable {
    /// One metric's reading: a number (counters, gauges), or count, sum, minimum and maximum (distributions; timers
    /// in nanoseconds, their keys suffixed `_ns`).
    enum Reading: Encodable {
        case number(JSONNumber)
        case summary(count: Int64, sum: JSONNumber, minimum: JSONNumber, maximum: JSONNumber, unitSuffix: String)

        func encode(to encoder: any Encoder) throws {
            switch self {
            case .number(let number): try number.encode(to: encoder)
            case .summary(let count, let sum, let minimum, let maximum, let unit):
                var container = encoder.container(keyedBy: JSONKey.self)
                try container.encode(count, forKey: JSONKey("count"))
                try container.encode(sum, forKey: JSONKey("sum" + unit))
                try container.encode(minimum, forKey: JSONKey("min" + unit))
                try container.encode(maximum, forKey: JSONKey("max" + unit))
            }
        }
    }

    var kinds: [String: [String: Reading]] = [:]

    package func encode(to encoder: any Encoder) throws { try kinds.encode(to: encoder) }
}
