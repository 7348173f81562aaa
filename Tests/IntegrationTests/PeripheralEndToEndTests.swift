import DBus
import Foundation
import TestWorld
import Testing

/// The local peripheral end to end: the built gattway binary registers its GATT application with the simulator,
/// whose remote central reads, writes and subscribes; values come from and go to a real broker.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct PeripheralEndToEndTests {
    private func withWorld(
        whenFull: String = "backpressure", depth: Int = 16, _ body: (PeripheralWorld) async throws -> Void
    ) async throws {
        try await PeripheralWorld(whenFull: whenFull, depth: depth).run(body)
    }

    @Test func publishedValueReachesASubscribedCentralThroughAcquireNotify() async throws {
        try await withWorld { world in
            try await world.waitForApplication()
            try await world.connectCentral()
            let ccc = try await world.centralCall(
                "WriteCCC", [.string(PeripheralWorld.central), .string(PeripheralWorld.tx), .uint16(1)])
            #expect(ccc.first?.byte == 0)
            // bluetoothd answers the CCC write at once and takes the AcquireNotify socket in the background.
            try await world.control.waitForCounter("server.notify_acquired", atLeast: 1)
            try await world.publish("test/tx", "hello")
            let received = try await world.waitForReceived(count: 1)
            #expect(received == [Array("hello".utf8)])
            // The value travelled through the socket, not as a PropertiesChanged signal.
            #expect(try await world.control.counter("server.notify_fd_values") == 1)
            #expect(try await world.control.counter("server.notify_signal_values") == 0)
        }
    }

    @Test func readsHonourTheOffsetAndRefusePastTheEnd() async throws {
        try await withWorld { world in
            try await world.waitForApplication()
            try await world.publish("test/tx", "0123456789", retain: true)
            try await world.connectCentral()
            let deadline = ContinuousClock.now + .seconds(20)
            var whole: [UInt8] = []
            while ContinuousClock.now < deadline {
                let reply = try await world.centralCall(
                    "ReadValue", [.string(PeripheralWorld.central), .string(PeripheralWorld.tx), .uint16(0)])
                whole = reply.last?.bytes ?? []
                if !whole.isEmpty { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(whole == Array("0123456789".utf8))
            let tail = try await world.centralCall(
                "ReadValue", [.string(PeripheralWorld.central), .string(PeripheralWorld.tx), .uint16(4)])
            #expect(tail.last?.bytes == Array("456789".utf8))
            let past = try await world.centralCall(
                "ReadValue", [.string(PeripheralWorld.central), .string(PeripheralWorld.tx), .uint16(11)])
            #expect(past.first?.byte == 0x07)  // ATT Invalid Offset
        }
    }

    @Test func aCentralsWriteReachesTheSinkTopic() async throws {
        try await withWorld { world in
            try await world.waitForApplication()
            try await world.connectCentral()
            let code = try await world.centralCall(
                "WriteValue",
                [
                    .string(PeripheralWorld.central), .string(PeripheralWorld.rx), .bytes([0xCA, 0xFE]),
                    .string("request"), .uint16(0),
                ])
            #expect(code.first?.byte == 0)
            try await world.observer.waitForMessage(on: "test/rx") { $0 == "cafe" }
            let tooLong = try await world.centralCall(
                "WriteValue",
                [
                    .string(PeripheralWorld.central), .string(PeripheralWorld.rx),
                    .bytes(Array(repeating: 1, count: 100)),
                    .string("request"), .uint16(0),
                ])
            #expect(tooLong.first?.byte == 0x0D)  // Invalid Attribute Value Length
        }
    }
}
