import Testing
import YAML

@Suite struct YAMLDecoderTests {
    struct Characteristic: Decodable, Equatable {
        var uuid: String
        var qos: Int?
        var retain: Bool?
    }

    struct Device: Decodable, Equatable {
        var name: String
        var characteristics: [Characteristic]
        var labels: [String: String]?
    }

    struct File: Decodable, Equatable {
        var devices: [Device]
        var limits: [String: Int]
    }

    /// "devices[1].characteristics[0].qos": how the path of an error reads.
    private func path(_ keys: [any CodingKey]) -> String {
        keys.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
    }

    private func decodingError<Value: Decodable>(
        _ type: Value.Type, _ text: String, userInfo: [CodingUserInfoKey: Any] = [:]
    ) -> DecodingError? {
        do {
            _ = try YAMLDecoder().decode(type, from: text, userInfo: userInfo)
            return nil
        } catch {
            return error as? DecodingError
        }
    }

    @Test func arraysOfStructsDictionariesAndOptionalFields() throws {
        let file = try YAMLDecoder().decode(
            File.self,
            from: """
                devices:
                  - name: lock
                    characteristics:
                      - { uuid: 2A00, qos: 1, retain: yes }
                      - uuid: "2A01"
                    labels: { room: hall, floor: 1 }
                  - name: 42
                    characteristics: []
                    labels: ~
                limits: { command: 0x800, source: 2_048 }
                """)
        #expect(
            file
                == File(
                    devices: [
                        Device(
                            name: "lock",
                            characteristics: [
                                Characteristic(uuid: "2A00", qos: 1, retain: true),
                                Characteristic(uuid: "2A01", qos: nil, retain: nil),
                            ],
                            labels: ["room": "hall", "floor": "1"]),
                        Device(name: "42", characteristics: [], labels: nil),
                    ],
                    limits: ["command": 2048, "source": 2048]))
    }

    @Test func aTypeMismatchNamesThePathWhatWasFoundAndWhere() {
        let error = decodingError(
            File.self,
            """
            devices:
              - name: a
                characteristics: [{ uuid: x }, { uuid: y, qos: soon }]
            limits: {}
            """)
        guard case .typeMismatch(let type, let context) = error else {
            Issue.record("expected a type mismatch, got \(String(describing: error))")
            return
        }
        #expect(ObjectIdentifier(type) == ObjectIdentifier(Int.self))
        #expect(path(context.codingPath) == ".devices[0].characteristics[1].qos")
        #expect(
            context.debugDescription
                == "expected an integer that fits Int, found the scalar \"soon\" at line 3, column 52")
    }

    @Test func theWrongKindOfNodeIsATypeMismatch() {
        guard case .typeMismatch(_, let context) = decodingError(File.self, "devices: { a: 1 }\nlimits: {}") else {
            Issue.record("a mapping where a list is wanted")
            return
        }
        #expect(path(context.codingPath) == ".devices")
        #expect(context.debugDescription == "expected a sequence, found a mapping at line 1, column 10")
        guard case .typeMismatch(_, let rootContext) = decodingError(File.self, "- a\n- b") else {
            Issue.record("a sequence where a mapping is wanted")
            return
        }
        #expect(rootContext.codingPath.isEmpty)
        guard
            case .typeMismatch(_, let nameContext) = decodingError(
                [Device].self, "- { name: [x], characteristics: [] }")
        else {
            Issue.record("a sequence where a string is wanted")
            return
        }
        #expect(path(nameContext.codingPath) == "[0].name")
    }

    @Test func aMissingKeyIsKeyNotFoundAtItsMapping() {
        guard case .keyNotFound(let key, let context) = decodingError(File.self, "devices:\n  - name: a\nlimits: {}")
        else {
            Issue.record("expected keyNotFound")
            return
        }
        #expect(key.stringValue == "characteristics")
        #expect(path(context.codingPath) == ".devices[0]")
    }

    @Test func nullWhereAValueIsRequiredIsValueNotFound() {
        guard
            case .valueNotFound(_, let context) = decodingError(
                File.self, "devices:\n  - { name: ~, characteristics: [] }\nlimits: {}")
        else {
            Issue.record("expected valueNotFound")
            return
        }
        #expect(path(context.codingPath) == ".devices[0].name")
        guard case .valueNotFound = decodingError(File.self, "devices: null\nlimits: {}") else {
            Issue.record("a null list is no list")
            return
        }
    }

    @Test func anEmptyTextHasNoValue() {
        guard case .valueNotFound = decodingError(File.self, "# nothing") else {
            Issue.record("expected valueNotFound")
            return
        }
    }

    @Test func compositionErrorsPassThrough() {
        #expect(throws: YAMLError.duplicateKey("limits", at: YAMLMark(line: 2, column: 1))) {
            try YAMLDecoder().decode(File.self, from: "limits: {}\nlimits: {}")
        }
    }

    /// Reads through every kind of container by hand: nested keyed and unkeyed containers, `decodeNil`, a count, a
    /// super decoder, and the user info.
    struct HandDecoded: Decodable {
        enum Keys: String, CodingKey { case point, tags, parent, nothing }
        enum PointKeys: String, CodingKey { case x, y }

        var point: (x: Double, y: Double)
        var tags: [String?]
        var tagCount: Int?
        var parentName: String
        var parentPath: String
        var nothingIsNil: Bool
        var marker: String?
        var pastTheEnd: DecodingError?

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Keys.self)
            let point = try container.nestedContainer(keyedBy: PointKeys.self, forKey: .point)
            self.point = (try point.decode(Double.self, forKey: .x), try point.decode(Double.self, forKey: .y))
            var tags = try container.nestedUnkeyedContainer(forKey: .tags)
            tagCount = tags.count
            self.tags = []
            while !tags.isAtEnd {
                self.tags.append(try tags.decodeNil() ? nil : try tags.decode(String.self))
            }
            do {
                _ = try tags.decode(String.self)
            } catch let error as DecodingError {
                pastTheEnd = error
            }
            let parent = try container.superDecoder(forKey: .parent)
            parentName = try parent.singleValueContainer().decode(String.self)
            parentPath = parent.codingPath.map(\.stringValue).joined(separator: "/")
            nothingIsNil = try container.decodeNil(forKey: .nothing)
            marker = decoder.userInfo[CodingUserInfoKey(rawValue: "marker")!] as? String
        }
    }

    @Test func everyContainerKindAndTheUserInfo() throws {
        let decoded = try YAMLDecoder().decode(
            HandDecoded.self,
            from: """
                point: { x: 1.5, y: -2 }
                tags: [a, ~, "c"]
                parent: root
                nothing:
                """,
            userInfo: [CodingUserInfoKey(rawValue: "marker")!: "seen"])
        #expect(decoded.point == (1.5, -2))
        #expect(decoded.tags == ["a", nil, "c"])
        #expect(decoded.tagCount == 3)
        #expect(decoded.parentName == "root")
        #expect(decoded.parentPath == "parent")
        #expect(decoded.nothingIsNil)
        #expect(decoded.marker == "seen")
        guard case .valueNotFound(_, let context) = decoded.pastTheEnd else {
            Issue.record("reading past the end: \(String(describing: decoded.pastTheEnd))")
            return
        }
        #expect(path(context.codingPath) == ".tags[3]")
    }

    @Test func allKeysListsTheMappingsKeysInOrder() throws {
        struct Keys: Decodable {
            var names: [String]
            init(from decoder: any Decoder) throws {
                names = try decoder.container(keyedBy: AnyKey.self).allKeys.map(\.stringValue)
            }
        }
        struct AnyKey: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }
        #expect(
            try YAMLDecoder().decode(Keys.self, from: "zeta: 1\nalpha: 2\nmid: 3").names == ["zeta", "alpha", "mid"])
    }

    @Test func aliasesDecodeAsTheirAnchorsValue() throws {
        let file = try YAMLDecoder().decode(
            File.self,
            from: """
                devices:
                  - &lock { name: lock, characteristics: [{ uuid: 2A00 }] }
                  - *lock
                limits: {}
                """)
        #expect(file.devices.count == 2)
        #expect(file.devices[0] == file.devices[1])
    }
}
