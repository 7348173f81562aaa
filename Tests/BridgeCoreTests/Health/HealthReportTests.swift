import BridgeCore
import Testing

@Suite struct HealthReportTests {
    private static let healthy = HealthReport(
        uptimeSeconds: 42, bluezPresent: true, adapterPowered: true, brokerReconnects: 1, devicesKnown: 3,
        devicesConnected: 2, queues: [.init(name: "mqtt_outstanding", depth: 4), .init(name: "mqtt_inbound", depth: 0)])

    @Test func thePayloadCarriesEveryField() throws {
        let json = try JSONValue(parsing: Self.healthy.payload)
        #expect(json["status"] == .string("ok"))
        #expect(json["uptime"]?.doubleValue == 42)
        #expect(json["bluez_present"] == .bool(true))
        #expect(json["adapter_powered"] == .bool(true))
        #expect(json["broker_reconnects"]?.doubleValue == 1)
        #expect(json["devices"]?["known"]?.doubleValue == 3)
        #expect(json["devices"]?["connected"]?.doubleValue == 2)
        #expect(json["queues"]?["mqtt_outstanding"]?.doubleValue == 4)
        #expect(json["last_error"] == .null)
    }

    @Test func anUnpoweredAdapterOrMissingBlueZIsDegradedAndLongErrorsAreCut() throws {
        var report = Self.healthy
        report.adapterPowered = false
        report.lastError = .init(atUptimeSeconds: 40, message: String(repeating: "x", count: 1_000))
        let json = try JSONValue(parsing: report.payload)
        #expect(json["status"] == .string("degraded"))
        #expect(json["last_error"]?["message"]?.stringValue?.count == HealthReport.maximumErrorLength)
        #expect(json["last_error"]?["uptime"]?.doubleValue == 40)
    }

    @Test func aChangeIsPublishedAtOnceAndAnUnchangedStateOnlyEveryInterval() {
        var schedule = HealthSchedule(interval: .seconds(60))
        var report = Self.healthy
        var published = schedule.shouldPublish(report, now: .seconds(1))
        #expect(published)
        report.uptimeSeconds += 5
        published = schedule.shouldPublish(report, now: .seconds(6))
        #expect(!published)
        report.devicesConnected = 1
        published = schedule.shouldPublish(report, now: .seconds(7))
        #expect(published)
        report.uptimeSeconds += 30
        published = schedule.shouldPublish(report, now: .seconds(40))
        #expect(!published)
        published = schedule.shouldPublish(report, now: .seconds(67))
        #expect(published)
    }
}
