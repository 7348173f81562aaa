/// Maps an incoming topic back to what it addresses: a characteristic action or a bridge request.
///
/// Built once from the configuration. Characteristic topics may span several levels
/// (`<service-uuid>/<char-uuid>`), so lookup is by exact string in a dictionary, not by splitting.
package struct TopicRouter: Sendable {
    /// What an incoming message asks for.
    package enum Route: Sendable, Hashable {
        /// `/set` or `/get` on a configured characteristic.
        case characteristic(CharacteristicAddress, Action)
        /// `bridge/request/<verb>`.
        case bridgeRequest(verb: String)
    }

    /// A request on a characteristic topic.
    package enum Action: String, Sendable, Hashable {
        case set
        case get
    }

    /// Which configured characteristic: indices into ``BridgeConfiguration/devices`` and its characteristics.
    package struct CharacteristicAddress: Sendable, Hashable {
        package let deviceIndex: Int
        package let characteristicIndex: Int
        /// The topic levels, for replies: `<device>` and `<characteristic>`.
        package let deviceTopic: String
        package let characteristicTopic: String
    }

    package let layout: TopicLayout
    private let characteristics: [String: CharacteristicAddress]
    private let writable: Set<String>
    private let readable: Set<String>
    private let requestPrefix: String

    /// Builds the routes of every configured device that has a fixed topic name.
    ///
    /// Devices selected by `match` without a name get their topic from the address at run time; register
    /// them with ``adding(deviceTopic:deviceIndex:configuration:)`` when they appear.
    package init(configuration: BridgeConfiguration) {
        var router = TopicRouter(
            layout: TopicLayout(configuration.mqtt), characteristics: [:], writable: [], readable: [])
        for (index, device) in configuration.devices.enumerated() {
            guard let topic = device.topicName else { continue }
            router = router.adding(deviceTopic: topic, deviceIndex: index, configuration: configuration)
        }
        self = router
    }

    private init(
        layout: TopicLayout, characteristics: [String: CharacteristicAddress], writable: Set<String>,
        readable: Set<String>
    ) {
        self.layout = layout
        self.characteristics = characteristics
        self.writable = writable
        self.readable = readable
        requestPrefix = layout.base + "/bridge/request/"
    }

    /// A router that also routes the characteristics of `configuration.devices[deviceIndex]` under `deviceTopic`.
    package func adding(deviceTopic: String, deviceIndex: Int, configuration: BridgeConfiguration) -> TopicRouter {
        var characteristics = self.characteristics
        var writable = self.writable
        var readable = self.readable
        for (index, characteristic) in configuration.devices[deviceIndex].characteristics.enumerated() {
            let key = deviceTopic + "/" + characteristic.topicName
            characteristics[key] = CharacteristicAddress(
                deviceIndex: deviceIndex, characteristicIndex: index,
                deviceTopic: deviceTopic,
                characteristicTopic: characteristic.topicName)
            // Writes are a security boundary: only characteristics configured as writable accept /set.
            if characteristic.write != nil { writable.insert(key) }
            if characteristic.read { readable.insert(key) }
        }
        return TopicRouter(layout: layout, characteristics: characteristics, writable: writable, readable: readable)
    }

    /// The exact topics to subscribe to: every `/set` of a writable and every `/get` of a readable characteristic,
    /// plus the bridge request filter.
    package var subscriptions: [String] {
        let sets = writable.sorted().map { layout.base + "/" + $0 + "/set" }
        let gets = readable.sorted().map { layout.base + "/" + $0 + "/get" }
        return [layout.bridgeRequestFilter] + sets + gets
    }

    /// The route for an incoming topic, or nil when the topic addresses nothing Gattway accepts.
    package func route(_ topic: String) -> Route? {
        if topic.hasPrefix(requestPrefix) {
            let verb = topic.dropFirst(requestPrefix.count)
            guard !verb.isEmpty, !verb.contains("/") else { return nil }
            return .bridgeRequest(verb: String(verb))
        }
        guard topic.hasPrefix(layout.base + "/") else { return nil }
        let relative = topic.dropFirst(layout.base.count + 1)
        let action: Action
        if relative.hasSuffix("/set") {
            action = .set
        } else if relative.hasSuffix("/get") {
            action = .get
        } else {
            return nil
        }
        let key = String(relative.dropLast(4))
        guard let address = characteristics[key] else { return nil }
        switch action {
        case .set: guard writable.contains(key) else { return nil }
        case .get: guard readable.contains(key) else { return nil }
        }
        return .characteristic(address, action)
    }
}
