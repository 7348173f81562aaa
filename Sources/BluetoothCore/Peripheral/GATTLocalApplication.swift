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
        for service in services {
            for characteristic in service.characteristics { out.append((out.count, characteristic)) }
        }
        return out
    }
}
