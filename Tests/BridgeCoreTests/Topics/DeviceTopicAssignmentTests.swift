import BridgeCore
import Testing

@Suite struct DeviceTopicAssignmentTests {
    let assignment = DeviceTopicAssignment(configuredNames: ["lock", "thermometer", "chest-strap"])

    @Test func aConfiguredAddressDeviceAlwaysGetsItsConfiguredName() {
        let topic = assignment.topic(
            configuredName: "lock", selectsByAddress: true, addressName: "d00d10c40001", remembered: "front-door"
        ) { _ in true }
        #expect(topic == "lock")
    }

    @Test func aValidFreeRememberedTopicIsKeptForAMatchedDevice() {
        let topic = assignment.topic(
            configuredName: "thermometer", selectsByAddress: false, addressName: "a4c138000002",
            remembered: "thermometer_a4c138000002"
        ) { _ in false }
        #expect(topic == "thermometer_a4c138000002")
    }

    @Test(arguments: ["", "a/b", "+", "#", "line\nbreak", "nul\u{0}", String(repeating: "x", count: 65)])
    func anInvalidRememberedTopicIsIgnored(remembered: String) {
        let topic = assignment.topic(
            configuredName: "thermometer", selectsByAddress: false, addressName: "a4c138000002", remembered: remembered
        ) { _ in false }
        #expect(topic == "thermometer")
    }

    @Test func aRememberedTopicNeverTakesAnotherDevicesConfiguredName() {
        let topic = assignment.topic(
            configuredName: "thermometer", selectsByAddress: false, addressName: "a4c138000002", remembered: "lock"
        ) { _ in false }
        #expect(topic == "thermometer")
    }

    @Test func aRememberedTopicAnotherDeviceUsesIsNotShared() {
        let topic = assignment.topic(
            configuredName: "thermometer", selectsByAddress: false, addressName: "a4c138000002",
            remembered: "garden"
        ) { $0 == "garden" || $0 == "thermometer" }
        #expect(topic == "thermometer_a4c138000002")
    }

    @Test func theSecondDeviceOfAMatchGetsItsAddressAppended() {
        let topic = assignment.topic(
            configuredName: "thermometer", selectsByAddress: false, addressName: "a4c138000002", remembered: nil
        ) { $0 == "thermometer" }
        #expect(topic == "thermometer_a4c138000002")
    }

    @Test func rememberedTopicsAreValidatedAndUniqueOnLoad() {
        let (kept, dropped) = DeviceTopicAssignment.validatedRemembered([
            "AA:00:00:00:00:01": "garden",
            "AA:00:00:00:00:02": "garden",
            "AA:00:00:00:00:03": "evil/#",
            "AA:00:00:00:00:04": "kitchen",
        ])
        #expect(kept == ["AA:00:00:00:00:01": "garden", "AA:00:00:00:00:04": "kitchen"])
        #expect(dropped.map(\.address) == ["AA:00:00:00:00:02", "AA:00:00:00:00:03"])
    }
}
