import DBus
import Foundation
import Synchronization
import TestWorld
import Testing

@Suite("Exported objects: Properties, ObjectManager, Introspectable", .timeLimit(.minutes(5)))
struct DBusExportTests {
    static let characteristic = "org.bluez.GattCharacteristic1"

    /// A characteristic-like interface: stored Value (read/write), computed UUID, write-only Secret with a setter.
    static func characteristicInterface(secret: SecretBox) -> DBusInterface {
        DBusInterface(
            name: characteristic,
            methods: [
                DBusMethod(
                    name: "ReadValue", inputs: [DBusArgument("options", "a{sv}")],
                    outputs: [DBusArgument("value", "ay")], handler: .sync { _ in [.bytes([1, 2])] })
            ],
            properties: [
                DBusProperty(name: "UUID", signature: "s", source: .computed { .string("2a37") }),
                DBusProperty(name: "Value", signature: "ay", access: .readwrite, source: .stored(.bytes([0]))),
                DBusProperty(name: "Absent", signature: "n", source: .stored(nil)),
                DBusProperty(
                    name: "Secret", signature: "s", access: .write, source: .stored(nil),
                    setter: { value in secret.value.withLock { $0 = value.string ?? "" } }),
            ],
            signals: [DBusSignalDeclaration(name: "Changed", arguments: [DBusArgument("value", "ay")])])
    }

    func properties(
        _ world: DBusTestBus, _ method: String, _ arguments: [DBusValue], path: String = "/app/service0/char0"
    )
        async throws -> [DBusValue]
    {
        try await world.call(method, arguments, path: path, interface: "org.freedesktop.DBus.Properties")
    }

    @Test("Get, GetAll and Set follow the declarations, with the standard error names", arguments: DBusReader.allCases)
    func propertiesInterface(reader: DBusReader) async throws {
        try await DBusTestBus.with(reader: reader) { world in
            let secret = SecretBox()
            try await world.server.export(
                path: "/app/service0/char0", interfaces: [Self.characteristicInterface(secret: secret)])
            #expect(
                try await properties(world, "Get", [.string(Self.characteristic), .string("UUID")]) == [
                    .variant(.string("2a37"))
                ])
            let all = try await properties(world, "GetAll", [.string(Self.characteristic)]).first?.stringKeyedDictionary
            #expect(all == ["UUID": .string("2a37"), "Value": .bytes([0])])

            _ = try await properties(
                world, "Set", [.string(Self.characteristic), .string("Value"), .variant(.bytes([7, 8]))])
            #expect(
                try await properties(world, "Get", [.string(Self.characteristic), .string("Value")]) == [
                    .variant(.bytes([7, 8]))
                ])
            _ = try await properties(
                world, "Set", [.string(Self.characteristic), .string("Secret"), .variant(.string("s3"))])
            #expect(secret.value.withLock { $0 } == "s3")

            let readOnly = await #expect(throws: DBusError.self) {
                _ = try await properties(
                    world, "Set", [.string(Self.characteristic), .string("UUID"), .variant(.string("x"))])
            }
            #expect(readOnly?.name == DBusError.propertyReadOnly)
            let unknown = await #expect(throws: DBusError.self) {
                _ = try await properties(world, "Get", [.string(Self.characteristic), .string("Nope")])
            }
            #expect(unknown?.name == DBusError.unknownProperty)
            let wrongType = await #expect(throws: DBusError.self) {
                _ = try await properties(
                    world, "Set", [.string(Self.characteristic), .string("Value"), .variant(.string("x"))])
            }
            #expect(wrongType?.name == DBusError.invalidArgs)
            let noInterface = await #expect(throws: DBusError.self) {
                _ = try await properties(world, "GetAll", [.string("org.gattway.Missing")])
            }
            #expect(noInterface?.name == DBusError.unknownInterface)
        }
    }

    @Test(
        "GetManagedObjects returns every object below the root with every interface's properties",
        arguments: DBusReader.allCases)
    func managedObjects(reader: DBusReader) async throws {
        try await DBusTestBus.with(reader: reader) { world in
            try await world.server.addObjectManager(at: "/app")
            try await world.server.export(
                path: "/app/service0/char0", interfaces: [Self.characteristicInterface(secret: SecretBox())])
            try await world.server.export(
                path: "/app/service0",
                interfaces: [
                    DBusInterface(
                        name: "org.bluez.GattService1",
                        properties: [
                            DBusProperty(name: "Primary", signature: "b", source: .stored(.bool(true)))
                        ])
                ])
            try await world.server.export(path: "/other", interfaces: [DBusInterface(name: "org.gattway.Test")])
            let reply = try await world.call(
                "GetManagedObjects", path: "/app", interface: "org.freedesktop.DBus.ObjectManager")
            #expect(reply.first?.signature == "a{oa{sa{sv}}}")
            let objects = try #require(reply.first?.stringKeyedDictionary)
            #expect(Set(objects.keys) == ["/app/service0", "/app/service0/char0"])
            let service = objects["/app/service0"]?.stringKeyedDictionary?["org.bluez.GattService1"]?
                .stringKeyedDictionary
            #expect(service?["Primary"]?.bool == true)
            let char = objects["/app/service0/char0"]?.stringKeyedDictionary?[Self.characteristic]?
                .stringKeyedDictionary
            #expect(char?["Value"]?.bytes == [0])
        }
    }

    @Test("dbus-monitor sees InterfacesAdded, PropertiesChanged and InterfacesRemoved", arguments: DBusReader.allCases)
    func externalMonitorSeesSignals(reader: DBusReader) async throws {
        try await DBusTestBus.with(reader: reader) { world in
            let monitor = try ChildProcess(
                "dbus-monitor", ["--address", world.bus.address, "type='signal',sender='\(world.server.uniqueName)'"])
            // dbus-monitor prints NameLost once it has become a monitor; only then is it certain to see ours.
            try await monitor.waitForLine(timeout: .seconds(20)) { $0.contains("member=NameLost") }
            try await world.server.addObjectManager(at: "/app")
            try await world.server.export(
                path: "/app/char0", interfaces: [Self.characteristicInterface(secret: SecretBox())])
            try await world.server.setProperty(
                path: "/app/char0", interface: Self.characteristic, name: "Value", value: .bytes([0xab, 0xcd]))
            try await world.server.unexport(path: "/app/char0")
            try await monitor.waitForLine(timeout: .seconds(20)) { $0.contains("member=InterfacesRemoved") }
            let text = monitor.outputLines.joined(separator: "\n")
            #expect(text.contains("member=InterfacesAdded"))
            #expect(text.contains("path=/app; interface=org.freedesktop.DBus.ObjectManager"))
            #expect(
                text.contains("path=/app/char0; interface=org.freedesktop.DBus.Properties; member=PropertiesChanged"))
            #expect(text.contains("object path \"/app/char0\""))
            #expect(text.contains("ab cd"))
            #expect(text.contains("string \"2a37\""))
            // SIGKILL: like dbus-daemon, dbus-monitor ignores SIGTERM under the test runner (and ChildProcess
            // kills it on deinit if an expectation above threw first).
            monitor.send(SIGKILL)
            _ = await monitor.waitForExit()
        }
    }

    @Test("busctl introspect parses our XML, including child nodes and property types", arguments: DBusReader.allCases)
    func introspectionIsReadableByBusctl(reader: DBusReader) async throws {
        try await DBusTestBus.with(reader: reader) { world in
            try await world.server.addObjectManager(at: "/app")
            try await world.server.export(
                path: "/app/service0/char0", interfaces: [Self.characteristicInterface(secret: SecretBox())])
            let output = try await runTool(
                "busctl",
                ["--address=\(world.bus.address)", "introspect", world.server.uniqueName, "/app/service0/char0"])
            #expect(output.contains("org.bluez.GattCharacteristic1"))
            #expect(output.contains(".ReadValue"))
            #expect(output.contains(".Value") && output.contains("ay"))
            #expect(output.contains(".Changed"))
            #expect(output.contains("org.freedesktop.DBus.Properties"))
            let root = try await world.call(
                "Introspect", path: "/app", interface: "org.freedesktop.DBus.Introspectable")
            let xml = try #require(root.first?.string)
            #expect(xml.contains("<node name=\"service0\"/>"))
            #expect(xml.contains("org.freedesktop.DBus.ObjectManager"))
            let tree = try await runTool(
                "busctl", ["--address=\(world.bus.address)", "tree", "--list", world.server.uniqueName])
            #expect(tree.contains("/app/service0/char0"))
        }
    }
}

/// Where the write-only test property's setter stores what it was given.
final class SecretBox: Sendable {
    let value = Mutex("")
}
