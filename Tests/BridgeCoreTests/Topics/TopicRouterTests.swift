import BridgeCore
import Testing

@Suite struct TopicRouterTests {
    static let yaml = """
        mqtt: { url: "mqtt://localhost", gateway_id: attic }
        devices:
          - name: strap
            address: "C4:7C:8D:6A:3E:11"
            characteristics:
              - { name: heart_rate, service: "180D", uuid: "2A37", notify: true }
              - { service: "180D", uuid: "2A39", write: with_response, read: true, codec: hex }
          - address: "D0:0D:10:C4:00:01"
            characteristics:
              - { name: control, service: "FFF0", uuid: "FFF1", write: with_response, codec: utf8 }
          - name: other
            match: { service: "FCD2" }
            connect: never
        """

    @Test func buildsEveryTopicFromTheLayout() {
        let layout = TopicLayout(base: "gattway", gatewayID: "attic")
        #expect(layout.bridgeState == "gattway/bridge/attic/state")
        #expect(TopicLayout(base: "home/ble").bridgeState == "home/ble/bridge/state")
        #expect(layout.bridgeResponse("scan") == "gattway/bridge/response/scan")
        #expect(layout.availability("strap") == "gattway/strap/availability")
        #expect(layout.advert("strap") == "gattway/strap/advert")
        #expect(layout.setResult("strap", "control") == "gattway/strap/control/set/result")
        #expect(layout.get("strap", "180d/2a39") == "gattway/strap/180d/2a39/get")
    }

    @Test func routesSetAndGetOnlyWhereTheConfigurationAllows() throws {
        let router = TopicRouter(configuration: try BridgeConfiguration(yaml: Self.yaml))
        guard case .characteristic(let address, .set)? = router.route("gattway/strap/180d/2a39/set") else {
            Issue.record("no route for the unnamed writable characteristic")
            return
        }
        #expect(address.deviceIndex == 0 && address.characteristicIndex == 1)
        #expect(router.route("gattway/strap/180d/2a39/get") != nil)
        #expect(router.route("gattway/d00d10c40001/control/set") != nil)
        #expect(router.route("gattway/strap/heart_rate/set") == nil, "not writable")
        #expect(router.route("gattway/strap/heart_rate/get") == nil, "not readable")
        #expect(router.route("gattway/strap/nothing/set") == nil)
        #expect(router.route("elsewhere/strap/control/set") == nil)
        #expect(router.route("gattway/bridge/request/scan") == .bridgeRequest(verb: "scan"))
        #expect(router.route("gattway/bridge/request/a/b") == nil)
        #expect(router.subscriptions.contains("gattway/bridge/request/+"))
        #expect(router.subscriptions.contains("gattway/d00d10c40001/control/set"))
    }

    @Test func sanitisesDiscoveredNames() {
        #expect(TopicNaming.sanitized("Polar H10 / #1+\u{0}") == "Polar H10 _ _1__")
        #expect(TopicNaming.sanitized("   ") == nil)
        #expect(TopicNaming.sanitized(String(repeating: "x", count: 100))?.count == 64)
    }
}
