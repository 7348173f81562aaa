import BridgeCore
import Testing

/// `peripheral.passkey` and when the local peripheral needs to answer pairing requests.
@Suite struct PeripheralPairingConfigurationTests {
    private func configuration(_ peripheral: String) throws -> BridgeConfiguration {
        try BridgeConfiguration(yaml: "mqtt: { url: \"mqtt://localhost\" }\nperipheral: " + peripheral)
    }

    /// One characteristic with `flags`, and the topics its flags call for.
    private func services(flags: String) -> String {
        let source = flags.contains("notify") ? ", source_topic: home/battery" : ""
        let sink = flags.contains("write") ? ", sink_topic: home/battery/set" : ""
        return
            "services: [{ uuid: \"180F\", characteristics: [{ uuid: \"2A19\", flags: [\(flags)]\(source)\(sink) }] }]"
    }

    @Test func aPasskeyWithinSixDigitsIsKept() throws {
        let config = try configuration("{ passkey: 42, " + services(flags: "encrypt-read") + " }")
        #expect(config.peripheral?.passkey == 42)
        #expect(config.peripheral?.needsPairing == true)
    }

    @Test(arguments: [-1, 1_000_000])
    func aPasskeyOutsideSixDigitsIsRefusedAtItsPath(passkey: Int) {
        #expect {
            _ = try configuration("{ passkey: \(passkey), " + services(flags: "read") + " }")
        } throws: { error in
            (error as? ConfigurationErrors)?.errors.map(\.path) == ["peripheral.passkey"]
        }
    }

    @Test(arguments: ["encrypt-read", "encrypt-write", "encrypt-authenticated-read", "secure-write", "encrypt-notify"])
    func aCharacteristicNeedingEncryptionNeedsPairing(flag: String) throws {
        let config = try configuration("{ " + services(flags: "\(flag), read") + " }")
        #expect(config.peripheral?.needsPairing == true)
        #expect(config.peripheral?.passkey == nil)
    }

    @Test func plainFlagsNeedNoPairing() throws {
        let config = try configuration("{ " + services(flags: "read, write, notify") + " }")
        #expect(config.peripheral?.needsPairing == false)
    }

    @Test func anEncryptedDescriptorNeedsPairing() throws {
        let config = try configuration(
            "{ services: [{ uuid: \"180F\", characteristics: [{ uuid: \"2A19\", flags: [read], "
                + "descriptors: [{ uuid: \"2901\", flags: [encrypt-read], value: \"6869\" }] }] }] }")
        #expect(config.peripheral?.needsPairing == true)
    }
}
