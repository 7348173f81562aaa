/// The shape of a GATT application Gattway serves through BlueZ's GattManager1: services, characteristics and
/// constant descriptors, with BlueZ flag strings. Characteristics are numbered in declaration order across all
/// services (``GATTLocalApplication/characteristicIDs``); the handler is told which one a call is for by that id.
package struct GATTLocalApplication: Sendable {
    package struct Service: Sendable {
        package var uuid: String
        package var primary: Bool
        package var characteristics: [Characteristic]

        package init(uuid: String, primary: Bool, characteristics: [Characteristic]) {
            self.uuid = uuid
            self.primary = primary
            self.characteristics = characteristics
        }
    }

    package struct Characteristic: Sendable {
        package var uuid: String
        package var flags: [String]
        package var descriptors: [Descriptor]

        package init(uuid: String, flags: [String], descriptors: [Descriptor] = []) {
            self.uuid = uuid
            self.flags = flags
            self.descriptors = descriptors
        }

        /// True when the characteristic can notify or indicate (plain or with a security variant).
        package var canNotify: Bool { flags.contains { $0.hasSuffix("notify") || $0.hasSuffix("indicate") } }
    }

    /// A descriptor whose value never changes (user description, presentation format, ...).
    package struct Descriptor: Sendable {
        package var uuid: String
        package var flags: [String]
        package var value: [UInt8]

        package init(uuid: String, flags: [String], value: [UInt8]) {
            self.uuid = uuid
            self.flags = flags
            self.value = value
        }
    }

    package var services: [Service]

    package init(services: [Service]) {
        self.services = services
    }

    /// Every characteristic with its id (declaration order across services).
    package var characteristicIDs: [(id: Int, characteristic: Characteristic)] {
        var out: [(Int, Characteristic)] = []
        for service in services { for characteristic in service.characteristics { out.append((out.count, characteristic)) } }
        return out
    }
}

/// The options bluetoothd passes to ReadValue, WriteValue and AcquireNotify of a local attribute.
package struct GATTRequestOptions: Sendable, Hashable {
    /// The remote device's object path (`/org/bluez/hci0/dev_AA_BB_...`).
    package var device: String?
    package var mtu: Int
    package var offset: Int
    /// Set for the first pass of a prepared write to an `authorize` attribute: check, do not apply.
    package var prepareAuthorize: Bool

    package init(device: String? = nil, mtu: Int = 23, offset: Int = 0, prepareAuthorize: Bool = false) {
        self.device = device
        self.mtu = mtu
        self.offset = offset
        self.prepareAuthorize = prepareAuthorize
    }

    /// The remote device's address (`AA:BB:CC:DD:EE:FF`) taken from its object path, when there is one.
    package var deviceAddress: String? {
        guard let last = device?.split(separator: "/").last, last.hasPrefix("dev_") else { return nil }
        return String(last.dropFirst(4).map { $0 == "_" ? ":" : $0 })
    }
}

/// What Gattway does when bluetoothd calls into a local characteristic. Errors thrown as `DBusError` with an
/// `org.bluez.Error.*` name reach the remote central as the matching ATT error (bluez-dbus.md §6.5).
package protocol GATTServerHandler: Sendable {
    func readValue(characteristic: Int, options: GATTRequestOptions) async throws -> [UInt8]
    func writeValue(characteristic: Int, value: [UInt8], options: GATTRequestOptions) async throws
    /// A central enabled notifications and bluetoothd uses PropertiesChanged(Value) (the StartNotify way).
    func startNotify(characteristic: Int) async throws
    func stopNotify(characteristic: Int) async
    /// A central enabled notifications and bluetoothd wants a socket: return bluetoothd's end of a
    /// SOCK_SEQPACKET socketpair (the handler keeps the other) and the MTU.
    func acquireNotify(characteristic: Int, options: GATTRequestOptions) async throws -> (fd: Int32, mtu: UInt16)
    /// The remote confirmed an indication sent through PropertiesChanged.
    func confirm(characteristic: Int) async
    /// The current value, for the `Value` property (must not block).
    func currentValue(characteristic: Int) -> [UInt8]
}
