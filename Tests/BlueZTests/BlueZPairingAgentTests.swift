import BlueZ
import DBus
import Logging
import TestWorld
import Testing

/// Gattway's Agent1 answers bluetoothd (the owner of org.bluez) and nobody else. That bluetoothd's own calls are
/// answered is shown by the pairing end-to-end tests (CommandLinePairingEndToEndTests).
@Suite(.serialized, .timeLimit(.minutes(3)))
struct BlueZPairingAgentTests {
    @Test func callsFromAnyOtherClientAreRejected() async throws {
        let simulator = try await BlueZSimulatorProcess(scenario: "heart-rate.yaml")
        let host = try await DBusConnection.connect(
            to: .address(simulator.busAddress), name: "agent-host", logger: Logger(label: "test.agent"))
        let intruder = try await DBusConnection.connect(
            to: .address(simulator.busAddress), name: "intruder", logger: Logger(label: "test.agent"))
        do {
            let agent = try await BlueZPairingAgent.export(
                on: host, device: "/org/bluez/hci0/dev_C4_7C_8D_6A_3E_11", passkey: 4242
            ) { _ in }
            #expect(agent.bluetoothd != intruder.uniqueName)
            for (method, arguments) in [
                ("RequestPasskey", [DBusValue.objectPath("/org/bluez/hci0/dev_C4_7C_8D_6A_3E_11")]),
                ("RequestConfirmation", [.objectPath("/org/bluez/hci0/dev_C4_7C_8D_6A_3E_11"), .uint32(4242)]),
                ("RequestAuthorization", [.objectPath("/org/bluez/hci0/dev_C4_7C_8D_6A_3E_11")]),
            ] {
                let error = await #expect(throws: DBusError.self) {
                    _ = try await intruder.call(
                        destination: host.uniqueName, path: BlueZPairingAgent.path, interface: "org.bluez.Agent1",
                        method: method, arguments: arguments)
                }
                #expect(error?.name == "org.bluez.Error.Rejected", "\(method)")
                #expect(error?.message == "only bluetoothd may call the agent", "\(method)")
            }
        } catch {
            await intruder.close()
            await host.close()
            await simulator.stop()
            throw error
        }
        await intruder.close()
        await host.close()
        await simulator.stop()
    }
}
