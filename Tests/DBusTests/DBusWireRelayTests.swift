import Synchronization
import TestWorld
import Testing

@testable import DBus

@Suite("The bus read by Gattway itself, libdbus behind it", .timeLimit(.minutes(5)))
struct DBusWireRelayTests {
    @Test("a connection to a bus on a unix socket reads the bus itself")
    func unixBusesAreReadThroughTheRelay() async throws {
        try await DBusTestBus.with { world in
            #expect(await world.client.readsTheBusItself)
            #expect(await world.server.readsTheBusItself)
            // Registered by the relay, known to libdbus: the bus and the connection agree on the name.
            let owner = try await world.client.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                method: "GetNameOwner", arguments: [.string(world.client.uniqueName)])
            #expect(owner.first?.string == world.client.uniqueName)
        }
    }

    /// Signals read in place and messages libdbus reads arrive interleaved in one read of the socket: each must be
    /// handed on in the order the bus sent it.
    @Test("signals read in place and messages read by libdbus keep the bus's order")
    func inPlaceAndLibdbusMessagesKeepTheirOrder() async throws {
        try await DBusTestBus.with { world in
            let seen = Mutex<[UInt32]>([])
            _ = try await world.client.tapSignals(
                matching: DBusMatchRule(sender: world.server.uniqueName, interface: "org.gattway.Test", member: "Cold")
            ) { signal in
                guard let number = signal.arguments.first?.uint32 else { return false }
                seen.withLock { $0.append(number) }
                return true
            }
            _ = try await world.client.tapMessages(
                matching: DBusMatchRule(
                    sender: world.server.uniqueName, interface: "org.freedesktop.DBus.Properties",
                    member: "PropertiesChanged", arg0: "org.gattway.Value")
            ) { message in
                guard let value = message.loneByteArrayChange(ofInterface: "org.gattway.Value", property: "Value"),
                    value.count == 2
                else { return false }
                seen.withLock { $0.append(UInt32(value[0]) | UInt32(value[1]) << 8) }
                return true
            }
            let count: UInt32 = 600
            for number in 0..<count {
                if number % 3 == 0 {
                    try await world.server.emitSignal(
                        path: "/o", interface: "org.gattway.Test", name: "Cold", arguments: [.uint32(number)])
                } else {
                    try await world.server.emitByteArrayChange(
                        path: "/o", interface: "org.gattway.Value", property: "Value",
                        value: [UInt8(number & 0xFF), UInt8(number >> 8)])
                }
            }
            let deadline = ContinuousClock.now + .seconds(20)
            while seen.withLock({ $0.count }) < Int(count), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(seen.withLock { $0 } == Array(0..<count))
        }
    }

    @Test("a signal a tap declines in place reaches the streams, decoded through libdbus")
    func aDeclinedSignalReachesTheStreams() async throws {
        try await DBusTestBus.with { world in
            let rule = DBusMatchRule(
                sender: world.server.uniqueName, interface: "org.freedesktop.DBus.Properties",
                member: "PropertiesChanged")
            let stream = try await world.client.signals(matching: rule)
            let offered = Mutex(0)
            _ = try await world.client.tapMessages(matching: rule) { _ in
                offered.withLock { $0 += 1 }
                return false
            }
            try await world.server.emitByteArrayChange(
                path: "/o", interface: "org.gattway.Value", property: "Value", value: [1, 2, 3])
            let streamed = try await DBusSignalTests.collect(1, from: stream)
            #expect(streamed.first?.path == "/o")
            #expect(streamed.first?.arguments.first?.string == "org.gattway.Value")
            #expect(offered.withLock { $0 } == 1)
        }
    }

    @Test("a message's length is read from its fixed header; a header that starts no message is refused")
    func framing() {
        func length(_ bytes: [UInt8]) -> DBusWireFrame.Length {
            bytes.withUnsafeBytes { DBusWireFrame.length(of: $0) }
        }
        // Little-endian signal, body 5 bytes, serial 7, header fields 9 bytes: 16 + 9 → 32, then the body.
        let header: [UInt8] = [0x6C, 4, 0, 1, 5, 0, 0, 0, 7, 0, 0, 0, 9, 0, 0, 0]
        #expect(length(Array(header.prefix(15))) == .needMore)
        #expect(length(header) == .message(37))
        var bigEndian = header
        bigEndian[0] = UInt8(ascii: "B")
        bigEndian[4...15] = [0, 0, 0, 5, 0, 0, 0, 7, 0, 0, 0, 9]
        #expect(length(bigEndian) == .message(37))
        for (index, value) in [(0, UInt8(ascii: "x")), (1, 0), (3, 2)] {
            var broken = header
            broken[index] = value
            guard case .invalid = length(broken) else {
                Issue.record("byte \(index) = \(value) was not refused")
                continue
            }
        }
        // A type the specification does not define is read past, not refused: libdbus ignores such messages.
        var unknownType = header
        unknownType[1] = 50
        #expect(length(unknownType) == .message(37))
        var serialZero = header
        serialZero[8] = 0
        #expect(length(serialZero) == .invalid("serial 0"))
        var huge = header
        huge[4...7] = [0, 0, 0, 0x08]  // 2²⁷ bytes of body
        guard case .invalid = length(huge) else {
            Issue.record("a body over the format's limit was not refused")
            return
        }
    }

    @Test("libdbus's side of the authentication is read up to BEGIN, and nothing else is taken")
    func libdbusAuthentication() {
        func read(_ text: String) -> DBusWireRelay.Authentication {
            DBusWireRelay.skipAuthentication([0] + Array(text.utf8))
        }
        let withDescriptors = "AUTH EXTERNAL 31303030\r\nNEGOTIATE_UNIX_FD\r\nBEGIN\r\n"
        #expect(read(withDescriptors) == .done(1 + withDescriptors.utf8.count))
        #expect(read("AUTH EXTERNAL 31303030\r\nBEGIN\r\nl") == .done(1 + 31))
        #expect(read("AUTH EXTERNAL 31303030\r\nNEGOTIATE_UNIX_FD\r\n") == .incomplete)
        #expect(read("AUTH EXTERNAL 31") == .incomplete)
        #expect(DBusWireRelay.skipAuthentication([]) == .incomplete)
        guard case .refused = DBusWireRelay.skipAuthentication(Array("AUTH EXTERNAL 31\r\n".utf8)) else {
            Issue.record("an authentication without its NUL was taken")
            return
        }
        for text in ["AUTH ANONYMOUS\r\n", "AUTH EXTERNAL 31\r\nDATA\r\n", "BEGIN\r\n"] {
            guard case .refused = read(text) else {
                Issue.record("\(text.debugDescription) was taken")
                continue
            }
        }
    }

    @Test("the unix socket of an address: path or abstract, escapes undone, other transports left to libdbus")
    func addresses() {
        #expect(
            DBusUnixAddress.parse("unix:path=/run/dbus/system_bus_socket")
                == DBusUnixAddress(path: "/run/dbus/system_bus_socket", isAbstract: false))
        #expect(
            DBusUnixAddress.parse("unix:abstract=/tmp/dbus-XYZ,guid=0123456789abcdef0123456789abcdef")
                == DBusUnixAddress(path: "/tmp/dbus-XYZ", isAbstract: true))
        #expect(
            DBusUnixAddress.parse("tcp:host=localhost,port=1;unix:path=/a%20b")
                == DBusUnixAddress(path: "/a b", isAbstract: false))
        #expect(DBusUnixAddress.parse("tcp:host=localhost,port=1") == nil)
        #expect(DBusUnixAddress.parse("unix:tmpdir=/tmp") == nil)
        #expect(DBusUnixAddress.parse("unix:path=/a%2") == nil)
        #expect(DBusUnixAddress.parse("unix:path=/a%00b") == nil)
        #expect(DBusUnixAddress.parse("unix:path=/a,abstract=/b") == nil)
    }
}
