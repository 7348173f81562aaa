internal import CDBus
import Synchronization

/// An object path and an interface that libdbus accepts, checked when made: what emits a signal per value from one
/// object keeps one, so the names are not checked again for each value (libdbus aborts the process on an invalid
/// name, which is why they are checked at all).
///
/// It also keeps the last byte-array change it made, whose copies carry the next values of the same length.
package final class DBusSignalOrigin: Sendable {
    package let path: String
    package let interface: String
    private let lastChange = Mutex<ByteArrayChangeTemplate?>(nil)

    package init(path: String, interface: String) throws(DBusError) {
        try DBusNameCheck.objectPath(path)
        try DBusNameCheck.interface(interface)
        self.path = path
        self.interface = interface
    }

    /// A new `PropertiesChanged(interface, {property: <ay value>}, [])` from this origin, unsent, owned by the
    /// caller; nil when libdbus runs out of memory.
    func byteArrayChange(property: String, value: [UInt8]) -> OpaquePointer? {
        lastChange.withLock { last in
            if let template = last, template.property == property, template.length == value.count {
                return template.copy(with: value)
            }
            guard let template = ByteArrayChangeTemplate(origin: self, property: property, value: value) else {
                return nil
            }
            last = template
            return template.copy(with: value)
        }
    }
}
