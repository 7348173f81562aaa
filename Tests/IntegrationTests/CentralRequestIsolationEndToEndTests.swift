import Foundation
import TestWorld
import Testing

/// A bridge request waits in its own task: a device whose connect hangs never holds up another device's commands,
/// and the number of requests and scan windows open at once is bounded.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct CentralRequestIsolationEndToEndTests {
    static let lock = "D0:0D:10:C4:00:01"

    static let strapAndHangingLock = """
        bluetooth:
          adapter: hci0
          request_timeout: 3
          connect_timeout: 8
          reconnect: { initial: 0.2, max: 1 }
        devices:
          - name: chest-strap
            address: "C4:7C:8D:6A:3E:11"
            characteristics:
              - { name: control, service: "180D", uuid: "2A39", write: with_response, codec: hex }
          - name: lock
            address: "\(lock)"
            connect: on_demand
            characteristics:
              - { name: control, service: "0000fff0-0000-1000-8000-00805f9b34fb", uuid: "0000fff1-0000-1000-8000-00805f9b34fb", write: with_response, codec: utf8 }
        """

    @Test func aHangingConnectRequestDoesNotHoldUpAnotherDevicesCommand() async throws {
        let world = try await CentralWorld(
            scenario: "demo.yaml", config: Self.strapAndHangingLock,
            prepare: { try await $0.setConnectHang(Self.lock, true) })
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/chest-strap/availability") { $0 == "online" }
            try await world.observer.waitForMessage(on: "gattway/lock/advert")
            try await world.publish("gattway/bridge/request/connect", #"{"device":"lock","transaction":"c"}"#)
            try await world.publish("gattway/chest-strap/control/set", #"{"value":"01","transaction":"s"}"#)
            try await world.observer.waitForMessage(on: "gattway/chest-strap/control/set/result") {
                $0 == #"{"ok":true,"transaction":"s"}"#
            }
            // The lock's connect hangs for its whole 8 s timeout: the strap's result came while it still waited.
            #expect(world.observer.messages(on: "gattway/bridge/response/connect").isEmpty)
            let connect = try await world.observer.waitForMessage(on: "gattway/bridge/response/connect")
            #expect(connect.payload.hasPrefix(#"{"ok":false"#))
            #expect(connect.payload.contains(#""transaction":"c""#))
            let writes = try await world.control.writes("C4:7C:8D:6A:3E:11", uuid: "2a39")
            #expect(writes == [[0x01]])
        }
    }

    @Test func scanWindowsOpenAtOnceAreBounded() async throws {
        let world = try await CentralWorld(scenario: "demo.yaml", config: Self.strapAndHangingLock)
        try await world.run { world in
            try await world.observer.waitForMessage(on: "gattway/bridge/state") { $0 == "online" }
            for index in 1...5 {
                try await world.publish("gattway/bridge/request/scan", #"{"duration":300,"transaction":\#(index)}"#)
            }
            let busy = try await world.observer.waitForMessage(on: "gattway/bridge/response/scan")
            #expect(busy.payload.hasPrefix(#"{"ok":false,"error":"gattway.Error.Busy""#))
            #expect(busy.payload.contains(#""transaction":5"#))
            #expect(world.observer.messages(on: "gattway/bridge/response/scan").count == 1)
        }
    }
}
