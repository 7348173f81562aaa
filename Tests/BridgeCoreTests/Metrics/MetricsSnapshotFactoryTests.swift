import BridgeCore
import CoreMetrics
import Testing

@Suite struct MetricsSnapshotFactoryTests {
    /// Handlers are made straight from the factory: a test never bootstraps the global metrics system.
    @Test func countersGaugesAndTimersAppearInTheSnapshot() throws {
        let factory = MetricsSnapshotFactory()
        let notifications = factory.makeCounter(label: "gattway.central.notifications", dimensions: [])
        notifications.increment(by: 40)
        // The same name is the same metric, wherever it is asked for.
        factory.makeCounter(label: "gattway.central.notifications", dimensions: []).increment(by: 2)
        factory.makeRecorder(
            label: "gattway.peripheral.queue_depth", dimensions: [("characteristic", "tx")], aggregate: false
        )
        .record(Int64(7))
        factory.makeRecorder(
            label: "gattway.peripheral.queue_depth", dimensions: [("characteristic", "tx")], aggregate: false
        )
        .record(Int64(3))
        let timer = factory.makeTimer(label: "gattway.central.write", dimensions: [])
        timer.recordNanoseconds(1_000)
        timer.recordNanoseconds(3_000)
        factory.makeFloatingPointCounter(label: "gattway.energy", dimensions: []).increment(by: 0.5)

        let snapshot = try JSONValue(parsing: factory.snapshotJSON())
        #expect(snapshot["counters"]?["gattway.central.notifications"]?.doubleValue == 42)
        #expect(snapshot["counters"]?["gattway.energy"]?.doubleValue == 0.5)
        #expect(snapshot["gauges"]?["gattway.peripheral.queue_depth{characteristic=tx}"]?.doubleValue == 3)
        let write = snapshot["timers"]?["gattway.central.write"]
        #expect(write?["count"]?.doubleValue == 2)
        #expect(write?["sum_ns"]?.doubleValue == 4_000)
        #expect(write?["min_ns"]?.doubleValue == 1_000)
        #expect(write?["max_ns"]?.doubleValue == 3_000)
        #expect(
            String(decoding: factory.snapshotJSON(), as: UTF8.self).contains(#""gattway.central.notifications":42"#))
    }

    @Test func aDestroyedMetricLeavesTheSnapshot() throws {
        let factory = MetricsSnapshotFactory()
        let counter = factory.makeCounter(label: "gone", dimensions: [])
        counter.increment(by: 1)
        factory.destroyCounter(counter)
        let snapshot = try JSONValue(parsing: factory.snapshotJSON())
        #expect(snapshot["counters"]?["gone"] == nil)
        #expect(snapshot["gauges"] != nil && snapshot["distributions"] != nil)
    }
}
