package import DBus
import Synchronization

extension BlueZClient {
    /// Hands each characteristic value that bluetoothd announces on its own (a PropertiesChanged carrying only
    /// `Value`: a StartNotify notification or the echo of a read) to `handler`, on the D-Bus connection's loop as
    /// the signal is dispatched. When `handler` returns true the value is taken and `watch()` does not see it, so
    /// the object tree keeps no copy of it; when it returns false the signal goes on to `watch()` as usual.
    ///
    /// This is the StartNotify hot path: no task or actor hand-off per value, and the signal is read in place (see
    /// `DBusSignalMessage.loneByteArrayChange`), not decoded into values: the path and the bytes are all it costs,
    /// and the path only while it changes (values come in runs from one characteristic, whose path is then handed on
    /// as the same String). `handler` must be quick.
    package func tapCharacteristicValues(
        _ handler: @escaping @Sendable (_ characteristicPath: String, _ value: [UInt8]) -> Bool
    ) async throws -> DBusSignalTapToken {
        let rule = DBusMatchRule(
            sender: BlueZName.service, interface: BlueZName.properties, member: "PropertiesChanged",
            arg0: BlueZName.gattCharacteristic)
        // Uncontended: taps run on the connection's loop alone.
        let lastPath = Mutex("")
        return try await connection.tapMessages(matching: rule) { message in
            guard
                let value = message.loneByteArrayChange(
                    ofInterface: BlueZName.gattCharacteristic, property: "Value")
            else { return false }
            let path = lastPath.withLock { last in
                last = message.path(reusing: last)
                return last
            }
            return handler(path, value)
        }
    }

    /// The bytes of a `PropertiesChanged(GattCharacteristic1, {Value: ay}, [])`, or nil for anything else.
    package static func loneValue(of signal: DBusSignal) -> [UInt8]? {
        guard signal.arguments.count == 3, signal.arguments[2].stringArray?.isEmpty ?? false,
            let entries = signal.arguments[1].dictionaryEntries, entries.count == 1,
            entries[0].key.string == "Value"
        else { return nil }
        return entries[0].value.bytes
    }
}
