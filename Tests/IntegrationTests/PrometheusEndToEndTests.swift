import BridgeCore
import Foundation
import TestWorld
import Testing

/// `metrics.prometheus.listen`: the built binary serves its metrics on `/metrics`, read here by Python's
/// `prometheus_client` parser. The gateway has a `gateway_id`, so it runs the fleet protocol and exports its metrics.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct PrometheusEndToEndTests {
    @Test func theEndpointExportsCountersAsCountersAndTheyMove() async throws {
        let port = try freeLoopbackPort()
        let url = "http://127.0.0.1:\(port)/metrics"
        let world = try await CentralWorld(
            scenario: "demo.yaml",
            config: Configs.strapAndLock + "\nmetrics:\n  prometheus:\n    listen: \"127.0.0.1:\(port)\"\n",
            extraMQTT: "  gateway_id: hall")
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/chest-strap/availability") { $0 == "online" }
            // Only the notifications this test sends: the strap's own stream stops.
            try await world.control.startNotifying("C4:7C:8D:6A:3E:11", uuid: "2A37", rate: 0)
            let first = try await Self.scrape(url) { $0.counter("gattway_central_notifications") != nil }
            #expect(first.families["gattway_central_notifications"]?.type == "counter")
            #expect(first.families["gattway_central_connects"]?.type == "counter")
            // Running totals of the MQTT client are counters; levels are gauges; labels are bounded names.
            #expect(first.families["gattway_mqtt_messages_published"]?.type == "counter")
            #expect(first.families["gattway_mqtt_connects"]?.type == "counter")
            #expect(first.families["gattway_dbus_signals_dropped"]?.type == "counter")
            #expect(first.families["gattway_mqtt_outstanding_publishes"]?.type == "gauge")
            #expect(first.counter("gattway_mqtt_connects", labels: ["connection": "main"]) == 1)
            let before = try #require(first.counter("gattway_central_notifications"))

            try await world.control.notify("C4:7C:8D:6A:3E:11", uuid: "2A37", [0x00, 77])
            try await world.observer.waitForMessage(on: "gattway/chest-strap/heart_rate") { $0 == "{\"bpm\":77}" }
            let after = try await Self.scrape(url) { $0.counter("gattway_central_notifications") == before + 1 }
            #expect(after.counter("gattway_central_notifications") == before + 1)
            let published = after.counter("gattway_mqtt_messages_published", labels: ["connection": "main"])
            #expect(published ?? 0 > 0)

            let elsewhere = try await PrometheusScrape.scrape("http://127.0.0.1:\(port)/other")
            #expect(elsewhere.status == 404)

            // Every series the fleet dashboard queries is exported here, the fleet's among them: alone in its fleet,
            // this gateway claimed and owns what it hears (the strap at least).
            let fleet = try await Self.scrape(url) { ($0.value("gattway_fleet_devices_owned") ?? 0) >= 1 }
            #expect(fleet.families["gattway_fleet_devices_owned"]?.type == "gauge")
            #expect(fleet.families["gattway_fleet_claims_published"]?.type == "counter")
            #expect((fleet.counter("gattway_fleet_claims_published") ?? 0) >= 1)
            let exported = Set(fleet.families.values.flatMap { $0.samples.map(\.name) })
            let declared = Set(
                FleetMetricNames.all.map { name in
                    let prometheus = name.replacingOccurrences(of: ".", with: "_")
                    return FleetMetricNames.counters.contains(name) ? prometheus + "_total" : prometheus
                })
            let queried = try Self.dashboardSeries()
            #expect(queried.count >= 10)
            #expect(queried.contains("gattway_central_notifications_total"))
            #expect(
                declared.subtracting(exported).isEmpty,
                "fleet metrics not exported: \(declared.subtracting(exported).sorted())")
            let unknown = queried.subtracting(exported)
            #expect(unknown.isEmpty, "the dashboard queries series nobody exports: \(unknown.sorted())")
        }
    }

    @Test func withoutTheSettingNothingListens() async throws {
        let port = try freeLoopbackPort()
        let world = try await CentralWorld(scenario: "demo.yaml", config: Configs.strapAndLock)
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/bridge/state") { $0 == "online" }
            await #expect(throws: (any Error).self) {
                try await PrometheusScrape.scrape("http://127.0.0.1:\(port)/metrics")
            }
        }
    }

    /// The series names in `deploy/grafana/gattway-fleet.json`'s queries (`up` is Prometheus's own, per target).
    private static func dashboardSeries() throws -> Set<String> {
        let data = try Data(contentsOf: URL(fileURLWithPath: packageRoot + "/deploy/grafana/gattway-fleet.json"))
        let dashboard = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let panels = try #require(dashboard["panels"] as? [[String: Any]])
        let expressions = panels.flatMap {
            ($0["targets"] as? [[String: Any]] ?? []).compactMap { $0["expr"] as? String }
        }
        let pattern = try NSRegularExpression(pattern: "\\bgattway_[a-z0-9_]+")
        var names: Set<String> = []
        for expression in expressions {
            #expect(expression.contains("up{") || expression.contains("gattway_"), "\(expression)")
            let range = NSRange(expression.startIndex..., in: expression)
            for match in pattern.matches(in: expression, range: range) {
                names.insert(String(expression[Range(match.range, in: expression)!]))
            }
        }
        return names
    }

    /// Scrapes until `accept` holds (the counter is bumped just after the value is handed to MQTT).
    private static func scrape(_ url: String, until accept: (PrometheusScrape) -> Bool) async throws -> PrometheusScrape
    {
        let deadline = ContinuousClock.now + .seconds(20)
        var last: PrometheusScrape?
        while ContinuousClock.now < deadline {
            if let scrape = try? await PrometheusScrape.scrape(url) {
                if accept(scrape) { return scrape }
                last = scrape
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        throw TestWorldError(
            "no scrape of \(url) as expected within 20 s; last: \(String(describing: last?.families.keys.sorted()))")
    }
}
