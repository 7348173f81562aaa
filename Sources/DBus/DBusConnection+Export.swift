internal import CDBus
import Logging

extension DBusConnection {
    /// Exports `interfaces` at `path` (adding to, or replacing same-named, interfaces already there).
    ///
    /// Below an object-manager root, `InterfacesAdded` is emitted. Properties, Introspectable and, on a root,
    /// ObjectManager are provided for every exported object.
    package func export(path: String, interfaces: [DBusInterface]) throws {
        try DBusNameCheck.objectPath(path)
        for interface in interfaces {
            try DBusNameCheck.interface(interface.name)
            for method in interface.methods { try DBusNameCheck.member(method.name) }
            for property in interface.properties { try DBusNameCheck.singleCompleteType(property.signature) }
        }
        var object = objects[path] ?? ExportedObject()
        for interface in interfaces {
            if object.interfaces[interface.name] == nil { object.order.append(interface.name) }
            object.interfaces[interface.name] = ExportedInterface(interface)
        }
        objects[path] = object
        logger.trace("dbus.exported", metadata: ["dbus.path": "\(path)"])
        let added = object.interfacesAndProperties(interfaces.map(\.name))
        for root in objectManagerRoots where isDescendant(path, of: root) {
            try emitSignal(
                path: root, interface: DBusStandardInterface.objectManager, name: "InterfacesAdded",
                arguments: [.objectPath(path), added])
        }
    }

    /// Removes the named interfaces from `path` (all of them when nil); emits `InterfacesRemoved` below a root.
    package func unexport(path: String, interfaces names: [String]? = nil) throws {
        guard var object = objects[path] else { return }
        let removed = (names ?? object.order).filter { object.interfaces[$0] != nil }
        for name in removed { object.interfaces[name] = nil }
        object.order.removeAll { removed.contains($0) }
        objects[path] = object.order.isEmpty ? nil : object
        guard !removed.isEmpty, handle != nil else { return }
        for root in objectManagerRoots where isDescendant(path, of: root) {
            try emitSignal(
                path: root, interface: DBusStandardInterface.objectManager, name: "InterfacesRemoved",
                arguments: [.objectPath(path), .stringArray(removed)])
        }
    }

    /// Serves org.freedesktop.DBus.ObjectManager at `root` for every object exported below it.
    package func addObjectManager(at root: String) throws {
        try DBusNameCheck.objectPath(root)
        objectManagerRoots.insert(root)
    }

    package func removeObjectManager(at root: String) {
        objectManagerRoots.remove(root)
    }

    /// Changes a stored property and emits `PropertiesChanged` (nil makes the property absent: invalidated).
    package func setProperty(
        path: String, interface: String, name: String, value: DBusValue?, emitChanged: Bool = true
    ) throws {
        guard var property = objects[path]?.interfaces[interface]?.properties[name] else {
            throw DBusError(name: DBusError.unknownProperty, message: "\(path) has no property \(interface).\(name)")
        }
        guard case .stored = property.source else {
            throw DBusError.invalid("\(interface).\(name) at \(path) is computed; emit propertiesChanged instead")
        }
        if let value, value.signature != property.signature {
            throw DBusError.invalid("\(interface).\(name) has type \(property.signature), not \(value.signature)")
        }
        property.source = .stored(value)
        objects[path]!.interfaces[interface]!.properties[name] = property
        guard emitChanged else { return }
        if let value {
            try propertiesChanged(path: path, interface: interface, changed: [name: value])
        } else {
            try propertiesChanged(path: path, interface: interface, changed: [:], invalidated: [name])
        }
    }

    /// Emits org.freedesktop.DBus.Properties.PropertiesChanged for `path`.
    package func propertiesChanged(
        path: String, interface: String, changed: [String: DBusValue], invalidated: [String] = []
    ) throws {
        try emitSignal(
            path: path, interface: DBusStandardInterface.properties, name: "PropertiesChanged",
            arguments: [.string(interface), .stringVariantDictionary(changed), .stringArray(invalidated)])
    }

    /// Answers an incoming method call, or leaves it to libdbus (org.freedesktop.DBus.Peer).
    func handleMethodCall(_ message: OpaquePointer) -> DBusHandlerResult {
        let interface = Self.string(dbus_message_get_interface(message))
        if interface == DBusStandardInterface.peer { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
        let call = DBusMethodCall(
            sender: Self.string(dbus_message_get_sender(message)) ?? "",
            path: Self.string(dbus_message_get_path(message)) ?? "/", interface: interface,
            member: Self.string(dbus_message_get_member(message)) ?? "",
            arguments: DBusMessageReader.arguments(of: message))
        if let refusal = refusalOfCaller(call.sender) {
            reply(to: message, with: .failure(refusal))
            return DBUS_HANDLER_RESULT_HANDLED
        }
        switch route(call) {
        case .reply(let values): reply(to: message, with: .success(values))
        case .failure(let error): reply(to: message, with: .failure(error))
        case .handler(let handler): run(handler, for: call, message: message)
        }
        return DBUS_HANDLER_RESULT_HANDLED
    }

    private enum Route {
        case reply([DBusValue])
        case failure(DBusError)
        case handler(DBusMethodHandler)
    }

    private func route(_ call: DBusMethodCall) -> Route {
        do {
            switch call.interface {
            case DBusStandardInterface.introspectable where call.member == "Introspect":
                return .reply([.string(introspectionXML(for: call.path))])
            case DBusStandardInterface.objectManager where call.member == "GetManagedObjects":
                guard objectManagerRoots.contains(call.path) else { break }
                return .reply([managedObjects(below: call.path)])
            case DBusStandardInterface.properties:
                return .reply(try handleProperties(call))
            default:
                break
            }
            guard let object = objects[call.path] else {
                return .failure(
                    DBusError(name: DBusError.unknownObject, message: "no object is exported at \(call.path)"))
            }
            if let interfaceName = call.interface {
                guard let interface = object.interfaces[interfaceName] else {
                    return .failure(
                        DBusError(
                            name: DBusError.unknownInterface,
                            message: "\(call.path) has no interface \(interfaceName)"))
                }
                if let method = interface.methods[call.member] { return .handler(method.handler) }
            } else {
                for name in object.order {
                    if let method = object.interfaces[name]?.methods[call.member] { return .handler(method.handler) }
                }
            }
            return .failure(
                DBusError(
                    name: DBusError.unknownMethod,
                    message: "\(call.path) has no method \(call.interface.map { $0 + "." } ?? "")\(call.member)"))
        } catch let error as DBusError {
            return .failure(error)
        } catch {
            return .failure(DBusError(name: DBusError.failed, message: "\(error)"))
        }
    }

    private func run(_ handler: DBusMethodHandler, for call: DBusMethodCall, message: OpaquePointer) {
        switch handler {
        case .sync(let body):
            reply(to: message, with: Result { try body(call) })
        case .async(let body):
            guard awaitingReplies.count < Self.maxAsyncHandlersInFlight else {
                reply(
                    to: message,
                    with: .failure(
                        DBusError(
                            name: DBusError.limitsExceeded,
                            message: "more than \(Self.maxAsyncHandlersInFlight) calls are already being handled")))
                return
            }
            let token = makeToken()
            dbus_message_ref(message)  // unref'd in finishIncoming (or on close)
            awaitingReplies[token] = message
            // A task per call so a slow handler (e.g. a GATT read waiting for MQTT) never blocks other calls.
            Task { [weak self] in
                let result = await Result { try await body(call) }
                await self?.finishIncoming(token, result)
            }
        }
    }

    private func finishIncoming(_ token: UInt64, _ result: Result<[DBusValue], any Error>) {
        guard let message = awaitingReplies.removeValue(forKey: token) else { return }
        defer { dbus_message_unref(message) }
        reply(to: message, with: result)
    }

    private func reply(to message: OpaquePointer, with result: Result<[DBusValue], any Error>) {
        guard dbus_message_get_no_reply(message) == 0 else { return }
        let what = "reply to \(Self.string(dbus_message_get_member(message)) ?? "?")"
        var replyMessage: OpaquePointer?
        switch result {
        case .success(let values):
            replyMessage = dbus_message_new_method_return(message)
            if let replyMessage {
                do {
                    try DBusMessageWriter.append(values, to: replyMessage)
                } catch {
                    dbus_message_unref(replyMessage)
                    self.reply(
                        to: message,
                        with: .failure(
                            DBusError(
                                name: DBusError.failed,
                                message: "the handler's reply could not be encoded: \(error)")))
                    return
                }
            }
        case .failure(let error):
            let dbusError = error as? DBusError ?? DBusError(name: DBusError.failed, message: "\(error)")
            let name = (try? DBusNameCheck.interface(dbusError.name)) != nil ? dbusError.name : DBusError.failed
            replyMessage = dbus_message_new_error(message, name, dbusError.message)
        }
        guard let replyMessage else { return }
        defer { dbus_message_unref(replyMessage) }
        do {
            try send(replyMessage, what)
        } catch {
            logger.debug("dbus.reply.failed", metadata: ["error": "\(error)"])
        }
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
