import CMosquitto

/// Owns one `struct mosquitto *` and destroys it exactly once.
///
/// Not Sendable: it lives inside `MosquittoClient`, whose loop is the only place the handle is used.
final class MosquittoHandle {
    private(set) var pointer: OpaquePointer?

    /// `mosquitto_lib_init` initialises OpenSSL and must run once per process before any handle exists.
    private static let libraryInitialised: Bool = {
        mosquitto_lib_init()
        return true
    }()

    init?(clientID: String, cleanStart: Bool) {
        _ = Self.libraryInitialised
        // The context (`obj`) is set later with mosquitto_user_data_set, once the owning actor exists.
        guard let pointer = mosquitto_new(clientID, cleanStart, nil) else { return nil }
        self.pointer = pointer
    }

    func destroy() {
        if let pointer { mosquitto_destroy(pointer) }
        pointer = nil
    }

    deinit { destroy() }
}
