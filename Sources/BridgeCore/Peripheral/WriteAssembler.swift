/// Turns the WriteValue calls bluetoothd makes into a local characteristic into whole values to publish. Pure.
///
/// What bluetoothd (5.66) sends, and so what this keys on:
/// - A Write Request or Write Command: one call, offset 0, the whole value.
/// - A prepared (long or reliable) write: while the central sends Prepare Write Requests, bluetoothd keeps the
///   pieces itself and joins each piece that continues the previous one of the same attribute
///   (`store_prep_data`, src/shared/gatt-server.c); only for an `authorize` characteristic does it ask the
///   application first, with `prepare-authorize: true`, to judge the first piece (gatt-database.c `chrc_write_cb`).
///   On Execute Write it makes one call per joined run, with the run's starting offset (`exec_next_prep_write`).
///
/// So every call that is not a `prepare-authorize` one carries a complete run: at offset 0 it is the value; at a
/// later offset it overwrites the value from there (ATT's meaning of an offset), onto the last value this central
/// wrote to the characteristic, which is kept until the central disconnects. Nothing waits on time.
package struct WriteAssembler: Sendable {
    package enum Rejection: Error, Sendable, Equatable {
        /// The value would be longer than the characteristic allows.
        case tooLong(Int)
        /// The offset is past the end of the value it would overwrite.
        case invalidOffset(offset: Int, length: Int)
    }

    package enum WriteArrivedAction: Sendable, Equatable {
        /// Publish this whole value.
        case publish([UInt8])
        /// A `prepare-authorize` check passed: answer success, publish nothing (the value comes on Execute).
        case authorized
        case reject(Rejection)
    }

    package let maximumLength: Int
    /// The last whole value each central wrote, by the central's object path.
    private var lastValues: [String: [UInt8]] = [:]

    package init(maximumLength: Int) {
        self.maximumLength = maximumLength
    }

    package mutating func writeArrived(
        _ bytes: [UInt8], offset: Int, prepareAuthorize: Bool, device: String?
    ) -> WriteArrivedAction {
        let end = offset + bytes.count
        if prepareAuthorize {
            return end <= maximumLength ? .authorized : .reject(.tooLong(end))
        }
        let base: [UInt8]
        if offset == 0 {
            base = []
        } else {
            let previous = device.flatMap { lastValues[$0] } ?? []
            guard offset <= previous.count else {
                return .reject(.invalidOffset(offset: offset, length: previous.count))
            }
            base = Array(previous.prefix(offset))
        }
        guard end <= maximumLength else { return .reject(.tooLong(end)) }
        let value = base + bytes
        if let device { lastValues[device] = value }
        return .publish(value)
    }

    /// The central is gone: what it wrote is no base for a later write.
    package mutating func centralDisconnected(_ device: String) {
        lastValues[device] = nil
    }
}
