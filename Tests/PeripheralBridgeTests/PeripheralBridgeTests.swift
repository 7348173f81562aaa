import BluetoothCore
import BridgeCore
import BridgeTesting
import MQTTCore
import Testing

@testable import PeripheralBridge

/// The local peripheral's decisions, against an in-memory broker, a fake GATT server and a manual clock: no daemon,
/// and no time passes unless a test moves the clock.
@Suite(.timeLimit(.minutes(1)))
struct PeripheralBridgeTests {
    typealias Harness = PeripheralBridgeHarness

    /// Fault 5: a central that drains characteristic a slowly holds the one MQTT connection under backpressure, but
    /// only until the stall limit; then it is dropped and counted, and the other central gets b's value.
    @Test(arguments: [false, true])
    func aSlowCentralIsDroppedAtTheStallLimitAndAnotherCentralGetsItsValue(fastPath: Bool) async throws {
        let harness = try Harness(fastPath: fastPath)
        try await harness.run {
            let slow = try await harness.server.acquireNotify(
                characteristic: Harness.a, device: Harness.phone, capacity: 1)
            let other = try await harness.server.acquireNotify(characteristic: Harness.b, device: Harness.tablet)
            for index in 1...40 { try await harness.publish("test/a", "a\(index)") }
            try await harness.publish("test/b", "b1")
            try await slow.waitForValues(1)
            // The slow central's queue is full and the consumer waits; b1 is behind the a values on the connection.
            #expect(other.texts.isEmpty)
            try await harness.clock.waitForSleepers(count: 3)
            harness.clock.advance(by: .seconds(5))
            try await other.wait(for: "b1") { $0.texts == ["b1"] }
            try await slow.wait(for: "the slow central dropped") { $0.isClosed }
            let snapshot = await harness.bridge.channels[Harness.a].snapshot
            #expect(snapshot.subscribersDropped == 1)
            #expect(snapshot.subscribers == 0)
            // Only what the link took before it stalled was sent.
            #expect(slow.texts == ["a1"])
        }
    }

    /// Under a drop policy nobody waits: b's value arrives at once, the slow central stays and loses old values.
    @Test(arguments: [false, true])
    func underADropPolicyASlowCentralLosesValuesButHoldsNobody(fastPath: Bool) async throws {
        let harness = try Harness(whenFull: "drop_oldest", fastPath: fastPath)
        try await harness.run {
            let slow = try await harness.server.acquireNotify(
                characteristic: Harness.a, device: Harness.phone, capacity: 1)
            let other = try await harness.server.acquireNotify(characteristic: Harness.b, device: Harness.tablet)
            for index in 1...40 { try await harness.publish("test/a", "a\(index)") }
            try await harness.publish("test/b", "b1")
            try await other.wait(for: "b1") { $0.texts == ["b1"] }
            #expect(!slow.isClosed)
            // The central catches up: the newest value is among what it gets.
            slow.keepUp()
            try await slow.wait(for: "a40") { $0.texts.last == "a40" }
            let snapshot = await harness.bridge.channels[Harness.a].snapshot
            #expect(snapshot.drops > 0)
            #expect(snapshot.subscribersDropped == 0)
        }
    }

    /// A central that never confirms its indications is dropped once values wait behind the unconfirmed one for
    /// the stall limit; a central that confirms keeps getting every value.
    @Test(arguments: [false, true])
    func aCentralThatNeverConfirmsIndicationsIsDroppedAndTheConfirmingOneGoesOn(fastPath: Bool) async throws {
        let harness = try Harness(fastPath: fastPath)
        try await harness.run {
            let silent = try await harness.server.acquireNotify(characteristic: Harness.c, device: Harness.phone)
            let confirming = try await harness.server.acquireNotify(characteristic: Harness.c, device: Harness.tablet)
            try await harness.publish("test/c", "c1")
            try await harness.publish("test/c", "c2")
            try await confirming.waitForValues(1)
            confirming.confirm()
            try await confirming.wait(for: "c2") { $0.texts == ["c1", "c2"] }
            #expect(silent.texts == ["c1"])
            try await harness.clock.waitForSleepers(count: 4)
            harness.clock.advance(by: .seconds(5))
            try await silent.wait(for: "the silent central dropped") { $0.isClosed }
            #expect(!confirming.isClosed)
            #expect(await harness.bridge.channels[Harness.c].snapshot.subscribersDropped == 1)
        }
    }

    /// The StartNotify path: one session per characteristic emits each value through the stack, and StopNotify
    /// ends it (later values are not emitted).
    @Test(arguments: [false, true])
    func aStartNotifySessionEmitsValuesUntilStopped(fastPath: Bool) async throws {
        let harness = try Harness(fastPath: fastPath)
        try await harness.run {
            let handler = try harness.handler()
            try await handler.startNotify(characteristic: Harness.a)
            try await handler.startNotify(characteristic: Harness.a)  // a second CCC enable: the same session
            #expect(harness.server.isNotifying(characteristic: Harness.a))
            try await harness.publish("test/a", "x")
            try await harness.server.wait(for: "x emitted") {
                $0.emitted(characteristic: Harness.a) == [Array("x".utf8)]
            }
            await handler.stopNotify(characteristic: Harness.a)
            #expect(!harness.server.isNotifying(characteristic: Harness.a))
            try await harness.publish("test/a", "y")
            // A marker after y on the same connection: once it arrived, y has been taken too.
            let marker = try await harness.server.acquireNotify(characteristic: Harness.b, device: Harness.phone)
            try await harness.publish("test/b", "marker")
            try await marker.wait(for: "marker") { $0.texts == ["marker"] }
            #expect(harness.server.emitted(characteristic: Harness.a) == [Array("x".utf8)])
        }
    }

    /// An indication the StartNotify way waits for the stack's Confirm() before the next value goes; a Confirm()
    /// confirms nothing a central's socket sent.
    @Test(arguments: [false, true])
    func aStartNotifyIndicationWaitsForConfirm(fastPath: Bool) async throws {
        let harness = try Harness(fastPath: fastPath)
        try await harness.run {
            let handler = try harness.handler()
            let socket = try await harness.server.acquireNotify(characteristic: Harness.c, device: Harness.phone)
            try await handler.startNotify(characteristic: Harness.c)
            try await harness.publish("test/c", "c1")
            try await harness.publish("test/c", "c2")
            try await harness.server.wait(for: "c1") { $0.emitted(characteristic: Harness.c).count == 1 }
            try await socket.waitForValues(1)
            await handler.confirm(characteristic: Harness.c)
            try await harness.server.wait(for: "c2") {
                $0.emitted(characteristic: Harness.c) == [Array("c1".utf8), Array("c2".utf8)]
            }
            // The socket's indication still waits for its own confirmation.
            #expect(socket.texts == ["c1"])
            socket.confirm()
            try await socket.wait(for: "c2 on the socket") { $0.texts == ["c1", "c2"] }
        }
    }

    /// A StartNotify session whose indications are never confirmed is dropped like a socket, and the stack is told
    /// it no longer notifies; the next StartNotify opens a new session.
    @Test(arguments: [false, true])
    func anUnconfirmedStartNotifySessionIsDroppedAndCanStartAgain(fastPath: Bool) async throws {
        let harness = try Harness(fastPath: fastPath)
        try await harness.run {
            let handler = try harness.handler()
            try await handler.startNotify(characteristic: Harness.c)
            try await harness.publish("test/c", "c1")
            try await harness.publish("test/c", "c2")
            try await harness.server.wait(for: "c1") { $0.emitted(characteristic: Harness.c).count == 1 }
            try await harness.clock.waitForSleepers(count: 3)
            harness.clock.advance(by: .seconds(5))
            try await harness.server.wait(for: "notifying off") { !$0.isNotifying(characteristic: Harness.c) }
            #expect(await harness.bridge.channels[Harness.c].snapshot.subscribersDropped == 1)
            try await handler.startNotify(characteristic: Harness.c)
            #expect(harness.server.isNotifying(characteristic: Harness.c))
            try await harness.publish("test/c", "c3")
            try await harness.server.wait(for: "c3") { $0.emitted(characteristic: Harness.c).last == Array("c3".utf8) }
        }
    }

    /// A prepared write arrives as bluetoothd sends it: an authorize check (published as nothing), then the joined
    /// value in one call, published once.
    @Test(arguments: [false, true])
    func aPreparedWriteIsPublishedOnceWhole(fastPath: Bool) async throws {
        let harness = try Harness(fastPath: fastPath)
        try await harness.run {
            let handler = try harness.handler()
            let value = [UInt8](0..<60)
            let options = GATTRequestOptions(device: Harness.phone, mtu: 23)
            var authorize = options
            authorize.prepareAuthorize = true
            try await handler.writeValue(characteristic: Harness.rx, value: Array(value.prefix(18)), options: authorize)
            try await handler.writeValue(characteristic: Harness.rx, value: value, options: options)
            var tail = options
            tail.offset = 58
            try await handler.writeValue(characteristic: Harness.rx, value: [0xAA, 0xBB], options: tail)
            let published = harness.broker.published(on: "test/rx").map(\.payloadText)
            let hex = value.map {
                String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16)
            }
            #expect(published == [hex.joined(), (hex.prefix(58) + ["aa", "bb"]).joined()])
            let tooLong = await #expect(throws: BlueZError.self) {
                try await handler.writeValue(
                    characteristic: Harness.rx, value: [UInt8](repeating: 1, count: 70), options: options)
            }
            #expect(tooLong?.name == .invalidValueLength)
        }
    }

    /// Advertising stops at max_connections and comes back when the stack reports the central disconnected.
    @Test(arguments: [false, true])
    func advertisingResumesWhenTheStackReportsTheCentralGone(fastPath: Bool) async throws {
        let harness = try Harness(maxConnections: 1, fastPath: fastPath)
        try await harness.run {
            try await harness.server.wait(for: "advertising") { $0.isAdvertising }
            _ = try await harness.handler().readValue(
                characteristic: Harness.a, options: GATTRequestOptions(device: Harness.phone))
            try await harness.server.wait(for: "advertising stopped") { !$0.isAdvertising }
            harness.server.report(.centralDisconnected(device: Harness.phone))
            try await harness.server.wait(for: "advertising again") { $0.isAdvertising }
        }
    }

    /// A stop asked for while the advertisement is being registered wins: once bluetoothd answers the registration,
    /// the advertisement is unregistered again, and the request's answer and the status say it is off.
    @Test func aStopAskedForWhileTheAdvertisementRegistersLeavesNoAdvertisement() async throws {
        let harness = try Harness()
        harness.server.holdRegistrations()
        try await harness.run {
            try await harness.server.wait(for: "a registration in flight") { $0.heldRegistrationCount == 1 }
            try await harness.publish("gw/bridge/request/advertise", #"{"enabled":false,"transaction":"stop"}"#)
            // The request waits for the registration in flight: nothing answers it before bluetoothd does.
            try await Task.sleep(for: .milliseconds(50))
            #expect(harness.broker.published(on: "gw/bridge/response/advertise").isEmpty)
            harness.server.releaseRegistrations()
            let answer = try await harness.broker.nextPublished(on: "gw/bridge/response/advertise")
            #expect(answer.payloadText.contains(#""advertising":false"#), "\(answer.payloadText)")
            #expect(!harness.server.isAdvertising)
            harness.clock.advance(by: .seconds(1))
            let status = try await harness.broker.nextPublished(on: "gw/peripheral/status") {
                $0.payloadText.contains(#""advertising":false"#)
            }
            #expect(status.payloadText.contains(#""registered":true"#))
            // Asked for again, it comes back.
            try await harness.publish("gw/bridge/request/advertise", #"{"enabled":true}"#)
            try await harness.server.wait(for: "advertising again") { $0.isAdvertising }
        }
    }

    /// bluetoothd going away closes every link; its return registers the application again.
    @Test(arguments: [false, true])
    func aStackRestartClosesLinksAndRegistersAgain(fastPath: Bool) async throws {
        let harness = try Harness(fastPath: fastPath)
        try await harness.run {
            let link = try await harness.server.acquireNotify(characteristic: Harness.a, device: Harness.phone)
            harness.server.report(.stackGone)
            try await link.wait(for: "link closed") { $0.isClosed }
            try await harness.server.unregisterApplication(adapter: "hci0")  // the new bluetoothd knows nothing
            harness.server.report(.stackAppeared)
            try await harness.server.wait(for: "registered again") { $0.isApplicationRegistered }
        }
    }

    /// A link the stack closes ends its subscriber; the characteristic keeps serving the others.
    @Test(arguments: [false, true])
    func aLinkClosedByTheStackEndsOnlyItsSubscriber(fastPath: Bool) async throws {
        let harness = try Harness(fastPath: fastPath)
        try await harness.run {
            let leaving = try await harness.server.acquireNotify(characteristic: Harness.a, device: Harness.phone)
            let staying = try await harness.server.acquireNotify(characteristic: Harness.a, device: Harness.tablet)
            leaving.closeByStack()
            try await harness.publish("test/a", "v")
            try await staying.wait(for: "v") { $0.texts == ["v"] }
            #expect(leaving.texts.isEmpty)
            #expect(await harness.bridge.channels[Harness.a].snapshot.subscribersDropped == 0)
        }
    }
}
