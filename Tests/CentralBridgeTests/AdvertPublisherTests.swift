import BluetoothCore
import BridgeCore
import BridgeTesting
import Logging
import MQTTCore
import Synchronization
import Testing

@testable import CentralBridge

/// The advert publisher's rules, driven as the D-Bus loop's hot path drives it (`takeReport`): what is
/// published, what is left out because nothing changed, and what is handed back to the bridge actor.
@Suite("Advert publisher", .timeLimit(.minutes(5)))
struct AdvertPublisherTests {
    static let path = "/org/bluez/hci0/dev_A4_C1_38_00_00_01"
    static let address = BluetoothAddress("A4:C1:38:00:00:01")!
    static let bthomeUUID = "0000fcd2-0000-1000-8000-00805f9b34fb"

    /// BTHome v2, unencrypted: temperature (0x02, sint16 × 0.01 °C).
    static func bthome(centidegrees: Int16) -> [BLEDeviceProperty] {
        let raw = UInt16(bitPattern: centidegrees)
        return [.serviceData([bthomeUUID: [0x40, 0x02, UInt8(raw & 0xFF), UInt8(raw >> 8)]])]
    }

    struct World {
        let broker = InMemoryMQTTBroker()
        let clock = ManualClock()
        let publisher: AdvertPublisher
        let outbox: Outbox

        init(minimumInterval: Duration, takesReports: Bool = true, stateQoS: MQTTQoS = .atLeastOnce) {
            let client = broker.makeClient(id: "bridge")
            let bridgeClock = BridgeClock(clock)
            let logger = Logger(label: "gattway.tests.adverts")
            outbox = Outbox(mqtt: client, logger: logger, clock: bridgeClock)
            publisher = AdvertPublisher(
                outbox: outbox, clock: bridgeClock, started: bridgeClock.now, minimumInterval: minimumInterval,
                stateQoS: stateQoS, openAESCCM: nil, logger: logger)
            publisher.register(
                AdvertPublisherTests.path,
                AdvertPublisher.Registration(
                    address: AdvertPublisherTests.address, deviceTopic: "thermo", advertTopic: "gw/thermo/advert",
                    stateTopic: "gw/thermo/state", decoder: .auto, bindkey: nil, takesReports: takesReports),
                state: BLEDeviceState(
                    path: AdvertPublisherTests.path, properties: [.address(AdvertPublisherTests.address)]))
        }

        /// Takes a report as the D-Bus tap does; returns whether it was taken and what came back for the actor.
        func report(_ properties: [BLEDeviceProperty]) -> (Bool, [AdvertPublisher.FollowUp]) {
            var followUps: [AdvertPublisher.FollowUp] = []
            let taken = publisher.takeReport(AdvertPublisherTests.path, properties) { _, actions in
                followUps += actions
            }
            return (taken, followUps)
        }

        /// Everything published so far on `filter`, read once a marker sent after it has arrived (the outbox keeps
        /// order), so that what was not published is known to be absent.
        func published(on filter: String) async throws -> [String] {
            let mark = broker.publicationCount
            outbox.send(MQTTMessage(topic: "marker", text: "\(mark)", qos: .atMostOnce))
            _ = try await broker.nextPublished(on: "marker", since: mark)
            return broker.published(on: filter).map { String(decoding: $0.payload, as: UTF8.self) }
        }
    }

    @Test(
        "each new reading is decoded and published in the caller's turn; an RSSI-only change re-publishes the advert but not the state; a repeated report publishes nothing"
    )
    func readingsAndRepeats() async throws {
        let world = World(minimumInterval: .zero)
        let (taken, followUps) = world.report(Self.bthome(centidegrees: 2506) + [.rssi(-60)])
        #expect(taken)
        // The first decoded measurements go to the actor (Home Assistant discovery), values never do.
        #expect(followUps.count == 1)
        guard case .measurementsDecoded(let decoded)? = followUps.first else {
            Issue.record("expected the decoded measurements, got \(followUps)")
            return
        }
        guard case .number(let celsius)? = decoded.measurements.first(where: { $0.name == "temperature" })?.value else {
            Issue.record("no temperature in \(decoded.measurements)")
            return
        }
        #expect(abs(celsius - 25.06) < 1e-9)
        #expect(world.report([.rssi(-61)]).1.isEmpty)
        #expect(world.report([.rssi(-61)]).0, "a repeated report is taken (and dropped), not handed to the actor")
        let (_, later) = world.report(Self.bthome(centidegrees: 2507))
        #expect(later.isEmpty, "the same kinds of measurement need no new discovery")
        let states = try await world.published(on: "gw/thermo/state")
        #expect(states.count == 2)
        #expect(states.first?.contains("25.06") ?? false)
        #expect(states.last?.contains("25.07") ?? false)
        let adverts = try await world.published(on: "gw/thermo/advert")
        #expect(adverts.count == 3, "advert JSON: the first report, the RSSI change, the new data; not the repeat")
        #expect(adverts[1].contains("\"rssi\":-61"))
        // The actor's tree hears the newest state once.
        let unsynced = world.publisher.takeUnsynced()
        #expect(unsynced.count == 1)
        #expect(unsynced.first?.state.rssi == -61)
        #expect(unsynced.first?.state.serviceData[Self.bthomeUUID] == [0x40, 0x02, 0xCB, 0x09])
        #expect(world.publisher.takeUnsynced().isEmpty)
    }

    @Test("the state goes out at the configured QoS (mqtt.qos, as every value), retained; the advert JSON at QoS 0")
    func stateQoSIsTheConfiguredOne() async throws {
        for qos in [MQTTQoS.atMostOnce, .atLeastOnce] {
            let world = World(minimumInterval: .zero, stateQoS: qos)
            _ = world.report(Self.bthome(centidegrees: 2506))
            _ = try await world.published(on: "gw/thermo/state")
            let state = try #require(world.broker.published(on: "gw/thermo/state").first)
            #expect(state.qos == qos && state.retain)
            let advert = try #require(world.broker.published(on: "gw/thermo/advert").first)
            #expect(advert.qos == .atMostOnce)
        }
    }

    @Test(
        "within advert_min_interval the newest state and advert wait for a timer the actor runs; then the newest goes out"
    )
    func minimumInterval() async throws {
        let world = World(minimumInterval: .seconds(5))
        _ = world.report(Self.bthome(centidegrees: 2000))
        let (_, followUps) = world.report(Self.bthome(centidegrees: 2100))
        _ = world.report(Self.bthome(centidegrees: 2200))
        let waits = followUps.map { followUp -> String in
            switch followUp {
            case .flushAdvert(let after): "advert \(after)"
            case .flushState(let after): "state \(after)"
            case .measurementsDecoded: "measurements"
            }
        }
        #expect(waits.sorted() == ["advert 5.0 seconds", "state 5.0 seconds"])
        #expect(try await world.published(on: "gw/thermo/state").count == 1)
        world.clock.advance(by: .seconds(5))
        #expect(world.publisher.flushState(Self.path, mayPublish: true).isEmpty)
        world.publisher.flushAdvert(Self.path, mayPublish: true)
        let states = try await world.published(on: "gw/thermo/state")
        #expect(states.count == 2)
        #expect(states.last?.contains("22") ?? false, "the newest state wins: \(states)")
        #expect(try await world.published(on: "gw/thermo/advert").count == 2)
    }

    @Test(
        "RSSI changes within advert_min_interval go out once, at the flush, as the newest; an RSSI back to the published one by then publishes nothing"
    )
    func rssiChangesWithinTheInterval() async throws {
        let world = World(minimumInterval: .seconds(5))
        _ = world.report(Self.bthome(centidegrees: 2000) + [.rssi(-60)])
        let (_, followUps) = world.report([.rssi(-61)])
        #expect(followUps.count == 1, "one flush: \(followUps)")
        #expect(world.report([.rssi(-62)]).1.isEmpty && world.report([.rssi(-63)]).1.isEmpty)
        #expect(try await world.published(on: "gw/thermo/advert").count == 1)
        world.clock.advance(by: .seconds(5))
        world.publisher.flushAdvert(Self.path, mayPublish: true)
        var adverts = try await world.published(on: "gw/thermo/advert")
        #expect(adverts.count == 2)
        #expect(adverts.last?.contains("\"rssi\":-63") ?? false, "the newest RSSI: \(adverts)")
        _ = world.report([.rssi(-64)])
        _ = world.report([.rssi(-63)])
        world.clock.advance(by: .seconds(5))
        world.publisher.flushAdvert(Self.path, mayPublish: true)
        adverts = try await world.published(on: "gw/thermo/advert")
        #expect(adverts.count == 2, "back to the published advert: \(adverts)")
        _ = world.report([.rssi(-65)])
        adverts = try await world.published(on: "gw/thermo/advert")
        #expect(adverts.count == 3, "the interval had passed: at once")
        #expect(adverts.last?.contains("\"rssi\":-65") ?? false)
    }

    /// A timer of the report thread that holds what it is given until the test runs it.
    final class HeldSinkTimer: Sendable {
        private let held = Mutex<[(delay: Duration, work: @Sendable () -> Void)]>([])

        var timer: BLESinkTimer {
            BLESinkTimer { [self] delay, work in held.withLock { $0.append((delay, work)) } }
        }

        func take() -> [(delay: Duration, work: @Sendable () -> Void)] {
            held.withLock { held in
                defer { held = [] }
                return held
            }
        }
    }

    @Test(
        "with a timer on the report thread, the flushes of advert_min_interval run there and publish the newest; a device whose reports went back to the actor is flushed by it"
    )
    func flushesOnTheReportThread() async throws {
        let world = World(minimumInterval: .seconds(5))
        let held = HeldSinkTimer()
        let toActor = Mutex<[AdvertPublisher.FollowUp]>([])
        world.publisher.deferFlushes(on: held.timer) { _, followUps in toActor.withLock { $0 += followUps } }
        _ = world.report(Self.bthome(centidegrees: 2000))
        let (_, followUps) = world.report(Self.bthome(centidegrees: 2100))
        _ = world.report(Self.bthome(centidegrees: 2200))
        #expect(followUps.isEmpty, "the flushes are the report thread's, not the actor's: \(followUps)")
        let flushes = held.take()
        #expect(flushes.map(\.delay) == [.seconds(5), .seconds(5)])
        #expect(try await world.published(on: "gw/thermo/state").count == 1)
        world.clock.advance(by: .seconds(5))
        for flush in flushes { flush.work() }
        let states = try await world.published(on: "gw/thermo/state")
        #expect(states.count == 2)
        #expect(states.last?.contains("22") ?? false, "the newest state wins: \(states)")
        #expect(try await world.published(on: "gw/thermo/advert").count == 2)
        #expect(toActor.withLock { $0.isEmpty })
        #expect(held.take().isEmpty)

        // Held back again, then the device's reports go back to the actor before the timers fire.
        _ = world.report(Self.bthome(centidegrees: 2300))
        let later = held.take()
        #expect(later.count == 2)
        world.publisher.register(
            Self.path,
            AdvertPublisher.Registration(
                address: Self.address, deviceTopic: "thermo", advertTopic: "gw/thermo/advert",
                stateTopic: "gw/thermo/state", decoder: .auto, bindkey: nil, takesReports: false),
            state: BLEDeviceState(path: Self.path, properties: [.address(Self.address)]))
        world.clock.advance(by: .seconds(5))
        for flush in later { flush.work() }
        let forwarded = toActor.withLock { $0 }.map { followUp -> String in
            switch followUp {
            case .flushAdvert(let after): "advert \(after)"
            case .flushState(let after): "state \(after)"
            case .measurementsDecoded: "measurements"
            }
        }
        #expect(forwarded.sorted() == ["advert 0.0 seconds", "state 0.0 seconds"])
        #expect(try await world.published(on: "gw/thermo/state").count == 2, "the actor flushes, not the loop")
    }

    @Test(
        "once reports are taken in place, an older reading the actor still brings (its stream lags) is not published; its name is"
    )
    func actorCannotBringOlderReadings() async throws {
        let world = World(minimumInterval: .zero)
        _ = world.report(Self.bthome(centidegrees: 2500) + [.rssi(-60)])
        var older = BLEDeviceState(path: Self.path, properties: [.address(Self.address), .name("thermo-1")])
        _ = older.apply(Self.bthome(centidegrees: 2400) + [.rssi(-80)])
        // As the actor does: it syncs its tree first, then handles the (older) event it took from its stream.
        #expect(world.publisher.takeUnsynced().count == 1)
        _ = world.publisher.advertChanged(Self.path, state: older, mayPublish: true)
        let states = try await world.published(on: "gw/thermo/state")
        #expect(states.count == 1)
        #expect(states.first?.contains("25") ?? false)
        let adverts = try await world.published(on: "gw/thermo/advert")
        #expect(adverts.count == 2)
        #expect(adverts.last?.contains("thermo-1") ?? false, "the name the actor brought: \(adverts)")
        #expect(adverts.last?.contains("\"rssi\":-60") ?? false, "the RSSI of the newest report: \(adverts)")
    }

    @Test(
        "a state back to the one published while it waits for the interval's end publishes nothing at the flush"
    )
    func aStateBackToThePublishedOneWhileWaiting() async throws {
        let world = World(minimumInterval: .seconds(5))
        _ = world.report(Self.bthome(centidegrees: 2000))
        _ = world.report(Self.bthome(centidegrees: 2100))
        _ = world.report(Self.bthome(centidegrees: 2000))
        world.clock.advance(by: .seconds(5))
        #expect(world.publisher.flushState(Self.path, mayPublish: true).isEmpty)
        #expect(try await world.published(on: "gw/thermo/state") == [#"{"temperature":20,"format":"bthome"}"#])
        // And one that changes again afterwards goes out at once, the interval having passed.
        _ = world.report(Self.bthome(centidegrees: 2300))
        #expect(try await world.published(on: "gw/thermo/state").last == #"{"temperature":23,"format":"bthome"}"#)
    }

    /// Every device's state and advert are written into the same room, which swaps with the device's last published
    /// payload: each device's topics carry its own readings, and each reading once, whatever the order of reports.
    @Test("devices reporting in turn each publish their own states and adverts")
    func devicesInTurnPublishTheirOwn() async throws {
        let world = World(minimumInterval: .zero)
        let otherPath = "/org/bluez/hci0/dev_A4_C1_38_00_00_02"
        let other = BluetoothAddress("A4:C1:38:00:00:02")!
        world.publisher.register(
            otherPath,
            AdvertPublisher.Registration(
                address: other, deviceTopic: "other", advertTopic: "gw/other/advert", stateTopic: "gw/other/state",
                decoder: .auto, bindkey: nil, takesReports: true),
            state: BLEDeviceState(path: otherPath, properties: [.address(other)]))
        for step in 0..<6 {
            _ = world.report(Self.bthome(centidegrees: Int16(1000 + step)))
            _ = world.publisher.takeReport(otherPath, Self.bthome(centidegrees: Int16(2000 + step))) { _, _ in }
            // A repeat of the first device's reading publishes nothing.
            _ = world.report(Self.bthome(centidegrees: Int16(1000 + step)))
        }
        // 10.00 °C is written as the whole number it is.
        func states(_ degrees: Int) -> [String] {
            (0..<6).map { #"{"temperature":\#(degrees)\#($0 == 0 ? "" : ".0\($0)"),"format":"bthome"}"# }
        }
        #expect(try await world.published(on: "gw/thermo/state") == states(10))
        #expect(try await world.published(on: "gw/other/state") == states(20))
        let adverts = try await world.published(on: "gw/other/advert")
        #expect(adverts.count == 6 && adverts.allSatisfy { $0.hasPrefix(#"{"address":"A4:C1:38:00:00:02""#) })
    }

    @Test("reports of devices not registered, or registered for the actor's path, are declined and publish nothing")
    func declinedReports() async throws {
        let world = World(minimumInterval: .zero, takesReports: false)
        #expect(!world.report(Self.bthome(centidegrees: 2000)).0)
        var followUps: [AdvertPublisher.FollowUp] = []
        #expect(!world.publisher.takeReport("/org/bluez/hci0/dev_00_00_00_00_00_02", [.rssi(-50)]) { followUps += $1 })
        #expect(followUps.isEmpty)
        #expect(try await world.published(on: "gw/#").isEmpty)
        #expect(world.publisher.takeUnsynced().isEmpty)
        // After unregistering, not even a registered passive device is taken.
        let passive = World(minimumInterval: .zero)
        passive.publisher.unregister(Self.path)
        #expect(!passive.report([.rssi(-50)]).0)
    }
}
