import BluetoothCore
import BridgeCore
import BridgeTesting
import MQTTCore
import Testing

@testable import PeripheralBridge

/// The synchronous way of source values: when the stack emits on the MQTT client's loop, a value for idle
/// subscribers goes out in the turn that reads it; a queue that is not empty, a full link or an indication sends
/// it the subscriber task's way, and the order holds across the switch.
@Suite(.timeLimit(.minutes(1)))
struct SourceFastPathTests {
    typealias Harness = PeripheralBridgeHarness

    @Test func anIdleLinkAndAnIdleStartNotifySessionAreSentTheValueOnTheLoop() async throws {
        let harness = try Harness(fastPath: true)
        try await harness.run {
            let link = try await harness.server.acquireNotify(characteristic: Harness.b, device: Harness.phone)
            try await harness.handler().startNotify(characteristic: Harness.a)
            try await harness.publish("test/b", "b1")
            try await harness.publish("test/a", "a1")
            try await link.wait(for: "b1") { $0.texts == ["b1"] }
            try await harness.server.wait(for: "a1") { $0.emitted(characteristic: Harness.a) == [Array("a1".utf8)] }
            #expect(link.sentOnLoop == [true])
            #expect(harness.server.emittedOnLoop(characteristic: Harness.a) == [true])
            try await harness.waitForNotifications(1, of: Harness.b)
            try await harness.publish("test/b", "b2")
            try await link.wait(for: "b2") { $0.texts == ["b1", "b2"] }
            #expect(link.sentOnLoop == [true, true])
        }
    }

    /// A full link makes its value and the ones behind it wait for the subscriber's task; once the central caught
    /// up and nothing waits, values go at once again. Nothing is lost and the order holds.
    @Test func aFullLinkSwitchesToTheSubscribersTaskAndBackWithTheOrderKept() async throws {
        let harness = try Harness(fastPath: true)
        try await harness.run {
            let link = try await harness.server.acquireNotify(
                characteristic: Harness.b, device: Harness.phone, capacity: 1)
            for index in 1...3 { try await harness.publish("test/b", "b\(index)") }
            try await link.wait(for: "b1 sent, b2 refused") { $0.texts == ["b1"] }
            link.keepUp()
            try await link.wait(for: "b2 and b3") { $0.texts == ["b1", "b2", "b3"] }
            try await harness.waitForNotifications(3, of: Harness.b)
            try await harness.publish("test/b", "b4")
            try await link.wait(for: "b4") { $0.texts == ["b1", "b2", "b3", "b4"] }
            #expect(link.sentOnLoop == [true, false, false, true])
        }
    }

    /// Under backpressure a full queue leaves the value to the bridge's consumer, which waits for room; every later
    /// value, for any characteristic, waits behind it, so both centrals get everything in order.
    @Test func valuesLeftToTheConsumerUnderBackpressureKeepTheirOrderAcrossCharacteristics() async throws {
        let harness = try Harness(fastPath: true)
        try await harness.run {
            let slow = try await harness.server.acquireNotify(
                characteristic: Harness.a, device: Harness.phone, capacity: 1)
            let other = try await harness.server.acquireNotify(characteristic: Harness.b, device: Harness.tablet)
            for index in 1...20 { try await harness.publish("test/a", "a\(index)") }
            try await harness.publish("test/b", "b1")
            try await slow.waitForValues(1)
            // a1 went at once, a2 found the link full, a3…a5 fill the queue of 4 and a6 waits in the consumer.
            #expect(other.texts.isEmpty)
            slow.keepUp()
            try await slow.wait(for: "a20") { $0.texts.count == 20 }
            try await other.wait(for: "b1") { $0.texts == ["b1"] }
            #expect(slow.texts == (1...20).map { "a\($0)" })
            #expect(slow.sentOnLoop.first == true)
            #expect(slow.sentOnLoop.contains(false))
            #expect(await harness.bridge.channels[Harness.a].snapshot.subscribersDropped == 0)
        }
    }

    /// An indication is always sent by the subscriber's task, which times its confirmation.
    @Test func anIndicationTakesTheSubscribersTask() async throws {
        let harness = try Harness(fastPath: true)
        try await harness.run {
            let link = try await harness.server.acquireNotify(characteristic: Harness.c, device: Harness.phone)
            try await harness.publish("test/c", "c1")
            try await link.waitForValues(1)
            #expect(link.sentOnLoop == [false])
        }
    }

    /// A value the consumer must refuse (here longer than a characteristic holds) is refused there, not dropped on
    /// the way, and the values after it still arrive in order.
    @Test func aRefusedValueIsLeftToTheConsumerAndTheNextOnesStillArrive() async throws {
        let harness = try Harness(fastPath: true)
        try await harness.run {
            let link = try await harness.server.acquireNotify(characteristic: Harness.b, device: Harness.phone)
            try await harness.publish("test/b", String(repeating: "x", count: 600))
            try await harness.publish("test/b", "b1")
            try await harness.publish("test/b", "b2")
            try await link.wait(for: "b1 and b2") { $0.texts == ["b1", "b2"] }
            #expect(await harness.bridge.channels[Harness.b].value == Array("b2".utf8))
        }
    }
}
