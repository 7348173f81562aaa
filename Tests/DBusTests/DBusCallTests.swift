import DBus
import Foundation
import TestWorld
import Testing

@Suite("D-Bus method calls", .timeLimit(.minutes(5)))
struct DBusCallTests {
    @Test("error names and messages thrown by a handler reach the caller unchanged", arguments: DBusReader.allCases)
    func errorsRoundTrip(reader: DBusReader) async throws {
        try await DBusTestBus.with(reader: reader) { world in
            let busy = DBusMethod(
                name: "Busy",
                handler: .sync { _ in
                    throw DBusError(name: "org.bluez.Error.InProgress", message: "Operation already in progress")
                })
            let asyncBusy = DBusMethod(
                name: "AsyncBusy",
                handler: .async { _ in
                    throw DBusError(name: "org.bluez.Error.NotPermitted", message: "Write acquired")
                })
            try await world.server.export(
                path: "/org/gattway/Test",
                interfaces: [DBusInterface(name: "org.gattway.Test", methods: [busy, asyncBusy])])
            let error = await #expect(throws: DBusError.self) { _ = try await world.call("Busy") }
            #expect(error == DBusError(name: "org.bluez.Error.InProgress", message: "Operation already in progress"))
            #expect(error?.description == "org.bluez.Error.InProgress: Operation already in progress")
            let asyncError = await #expect(throws: DBusError.self) { _ = try await world.call("AsyncBusy") }
            #expect(asyncError == DBusError(name: "org.bluez.Error.NotPermitted", message: "Write acquired"))

            let unknown = await #expect(throws: DBusError.self) { _ = try await world.call("Nope") }
            #expect(unknown?.name == DBusError.unknownMethod)
            #expect(unknown?.message.contains("Nope") == true)
            let noObject = await #expect(throws: DBusError.self) { _ = try await world.call("Busy", path: "/nowhere") }
            #expect(noObject?.name == DBusError.unknownObject)
            let noInterface = await #expect(throws: DBusError.self) {
                _ = try await world.call("Busy", interface: "org.gattway.Other")
            }
            #expect(noInterface?.name == DBusError.unknownInterface)
        }
    }

    @Test("a call nobody answers fails with NoReply once its timeout passes", arguments: DBusReader.allCases)
    func timeoutGivesNoReply(reader: DBusReader) async throws {
        try await DBusTestBus.with(reader: reader) { world in
            let (gate, opener) = AsyncStream.makeStream(of: Void.self)
            let silent = DBusMethod(
                name: "Silent",
                handler: .async { _ in
                    for await _ in gate {}  // answers only when the test ends
                    return []
                })
            try await world.server.export(
                path: "/org/gattway/Test", interfaces: [DBusInterface(name: "org.gattway.Test", methods: [silent])])
            let started = ContinuousClock.now
            let error = await #expect(throws: DBusError.self) {
                _ = try await world.call("Silent", timeout: .milliseconds(200))
            }
            #expect(error?.name == DBusError.noReply)
            #expect(ContinuousClock.now - started < .seconds(15), "NoReply must come from the timeout, not the default")
            opener.finish()
        }
    }

    @Test("a slow async handler does not hold up other calls", arguments: DBusReader.allCases)
    func asyncHandlersRunConcurrently(reader: DBusReader) async throws {
        try await DBusTestBus.with(reader: reader) { world in
            let (gate, opener) = AsyncStream.makeStream(of: Void.self)
            let slow = DBusMethod(
                name: "Slow",
                handler: .async { _ in
                    for await _ in gate {}
                    return [.string("slow")]
                })
            let fast = DBusMethod(name: "Fast", handler: .sync { _ in [.string("fast")] })
            try await world.server.export(
                path: "/org/gattway/Test", interfaces: [DBusInterface(name: "org.gattway.Test", methods: [slow, fast])])
            try await withThrowingTaskGroup(of: [DBusValue].self) { (group) async throws -> Void in
                group.addTask { try await world.call("Slow") }
                let fastReply = try await world.call("Fast")
                #expect(fastReply == [.string("fast")])
                opener.finish()
                let slowReply = try await group.next()
                #expect(slowReply == [.string("slow")])
            }
        }
    }

    @Test("cancelling the calling task cancels the call", arguments: DBusReader.allCases)
    func cancellationStopsTheCall(reader: DBusReader) async throws {
        try await DBusTestBus.with(reader: reader) { world in
            let (gate, opener) = AsyncStream.makeStream(of: Void.self)
            let (entered, enteredSignal) = AsyncStream.makeStream(of: Void.self)
            let silent = DBusMethod(
                name: "Silent",
                handler: .async { _ in
                    enteredSignal.yield()
                    for await _ in gate {}
                    return []
                })
            try await world.server.export(
                path: "/org/gattway/Test", interfaces: [DBusInterface(name: "org.gattway.Test", methods: [silent])])
            let task = Task { try await world.call("Silent", timeout: .seconds(60)) }
            for await _ in entered { break }
            task.cancel()
            await #expect(throws: CancellationError.self) { _ = try await task.value }
            opener.finish()
        }
    }

    @Test("unix file descriptors pass both ways and carry data", arguments: DBusReader.allCases)
    func fileDescriptorsPassBothWays(reader: DBusReader) async throws {
        try await DBusTestBus.with(reader: reader) { world in
            // Server reads what the client's pipe holds; and returns a pipe of its own with data in it.
            let readPipe = DBusMethod(
                name: "ReadPipe",
                handler: .sync { call in
                    guard let fd = call.arguments.first?.fileDescriptor else {
                        throw DBusError(name: DBusError.invalidArgs, message: "need h")
                    }
                    return [.string(readAll(fd.rawValue))]
                })
            let openPipe = DBusMethod(
                name: "OpenPipe",
                handler: .sync { _ in
                    let (reader, writer) = try makePipe()
                    writeAll(writer, "hello over fd")
                    close(writer)
                    return [.unixFD(DBusFileDescriptor(owning: reader))]  // libdbus dups it; ours closes on release
                })
            try await world.server.export(
                path: "/org/gattway/Test",
                interfaces: [DBusInterface(name: "org.gattway.Test", methods: [readPipe, openPipe])])

            let (reader, writer) = try makePipe()
            writeAll(writer, "from the client")
            close(writer)
            let sent = DBusFileDescriptor(owning: reader)
            #expect(try await world.call("ReadPipe", [.unixFD(sent)]) == [.string("from the client")])

            let reply = try await world.call("OpenPipe")
            let received = try #require(reply.first?.fileDescriptor)
            #expect(readAll(received.rawValue) == "hello over fd")
        }
    }

    @Test("the bus daemon is a real external object we call", arguments: DBusReader.allCases)
    func callsTheBusDaemon(reader: DBusReader) async throws {
        try await DBusTestBus.with(reader: reader) { world in
            let names = try await world.client.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                method: "ListNames")
            let list = try #require(names.first?.stringArray)
            #expect(list.contains(world.client.uniqueName))
            #expect(list.contains(world.server.uniqueName))
            #expect(try await world.client.nameHasOwner(world.server.uniqueName))
            #expect(try await world.client.getNameOwner("org.gattway.Nobody") == nil)
        }
    }

    @Test("dbus-send and busctl, real external clients, call an object we export", arguments: DBusReader.allCases)
    func externalClientsCallUs(reader: DBusReader) async throws {
        try await DBusTestBus.with(reader: reader) { world in
            let greet = DBusMethod(
                name: "Greet", inputs: [DBusArgument("who", "s")], outputs: [DBusArgument("greeting", "s")],
                handler: .sync { call in [.string("hello " + (call.arguments.first?.string ?? "?"))] })
            try await world.server.export(
                path: "/org/gattway/Test", interfaces: [DBusInterface(name: "org.gattway.Test", methods: [greet])])
            let output = try await runTool(
                "dbus-send",
                [
                    "--bus=\(world.bus.address)", "--dest=\(world.server.uniqueName)", "--print-reply",
                    "/org/gattway/Test", "org.gattway.Test.Greet", "string:world",
                ])
            #expect(output.contains("string \"hello world\""))
            let busctl = try await runTool(
                "busctl",
                [
                    "--address=\(world.bus.address)", "call", world.server.uniqueName, "/org/gattway/Test",
                    "org.gattway.Test", "Greet", "s", "busctl",
                ])
            #expect(busctl.contains("s \"hello busctl\""))
        }
    }

    @Test("closing the bus ends the connection and is noticed", arguments: DBusReader.allCases)
    func busGoingAwayIsNoticed(reader: DBusReader) async throws {
        try await DBusTestBus.with(reader: reader) { world in
            #expect(await world.client.isConnected)
            await world.bus.stop()
            await world.client.waitUntilDisconnected()
            #expect(await world.client.isConnected == false)
            await #expect(throws: DBusError.self) { _ = try await world.client.nameHasOwner("org.freedesktop.DBus") }
        }
    }
}

func makePipe() throws -> (Int32, Int32) {
    var fds: [Int32] = [-1, -1]
    guard pipe(&fds) == 0 else { throw DBusError(name: DBusError.failed, message: "pipe() failed: errno \(errno)") }
    return (fds[0], fds[1])
}

func writeAll(_ fd: Int32, _ text: String) {
    let bytes = Array(text.utf8)
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
}

/// Reads until end of file (the writer is closed before the read starts).
func readAll(_ fd: Int32) -> String {
    var result: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 256)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count <= 0 { break }
        result += buffer[0..<count]
    }
    return String(decoding: result, as: UTF8.self)
}
