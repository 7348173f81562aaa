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
