import BridgeCore
import Testing

@Suite struct ConfigurationReloadTests {
    private func configuration(_ devices: String, mqtt: String = "url: \"mqtt://localhost\"") throws
        -> BridgeConfiguration
    {
        try BridgeConfiguration(yaml: "mqtt: { \(mqtt) }\ndevices:\n" + devices)
    }

    private let strap = "  - { name: strap, address: \"C4:7C:8D:6A:3E:11\" }\n"
    private let lock = "  - { name: lock, address: \"D0:0D:10:C4:00:01\" }\n"
    private let lockOnDemand = "  - { name: lock, address: \"D0:0D:10:C4:00:01\", connect: on_demand }\n"
    private let thermometer = "  - { name: thermometer, match: { service: \"FCD2\" }, connect: never }\n"

    @Test func anUnchangedConfigurationChangesNothing() throws {
        let running = try configuration(strap + lock)
        let reload = ConfigurationReload(running: running, new: running)
        #expect(reload.keptDevices == [0: 0, 1: 1])
        #expect(reload.droppedDevices.isEmpty && reload.addedDevices.isEmpty)
        #expect(!reload.changesDevices && reload.sectionsNeedingRestart.isEmpty)
        #expect(reload.applied == running)
    }

    @Test func addedRemovedAndChangedDevicesAreToldApart() throws {
        let running = try configuration(strap + lock)
        let new = try configuration(lockOnDemand + thermometer)
        let reload = ConfigurationReload(running: running, new: new)
        // The strap is gone, the lock changed (dropped and added again), the thermometer is new.
        #expect(reload.keptDevices.isEmpty)
        #expect(reload.droppedDevices == [0, 1])
        #expect(reload.addedDevices == [0, 1])
        #expect(reload.changesDevices)
    }

    @Test func aKeptDeviceFollowsItsNewPosition() throws {
        let running = try configuration(strap + lock)
        let new = try configuration(thermometer + lock + strap)
        let reload = ConfigurationReload(running: running, new: new)
        #expect(reload.keptDevices == [0: 2, 1: 1])
        #expect(reload.droppedDevices.isEmpty)
        #expect(reload.addedDevices == [0])
        #expect(reload.applied.devices == new.devices)
    }

    @Test func otherSectionsWaitForARestartAndStayAsTheyRun() throws {
        let running = try configuration(strap)
        let new = try configuration(strap, mqtt: "url: \"mqtt://elsewhere\"")
        let reload = ConfigurationReload(running: running, new: new)
        #expect(reload.sectionsNeedingRestart == ["mqtt"])
        #expect(reload.applied.mqtt == running.mqtt)
        #expect(!reload.changesDevices)
    }

    @Test func aChangedFleetSectionWaitsForARestart() throws {
        let mqtt = "url: \"mqtt://localhost\", gateway_id: hall"
        let running = try configuration(strap, mqtt: mqtt)
        let new = try BridgeConfiguration(yaml: "mqtt: { \(mqtt) }\nfleet: { margin: 9 }\ndevices:\n" + strap)
        let reload = ConfigurationReload(running: running, new: new)
        #expect(reload.sectionsNeedingRestart == ["fleet"])
        #expect(reload.applied.fleet == running.fleet)
    }
}
