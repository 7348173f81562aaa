import Testing

@testable import CentralBridge

/// The advert publisher's device table remembers where it found paths lately, by the address of their bytes; whatever
/// changes which paths it holds must make it look again, or a remembered index would point at another device (or
/// trap), and a path in another String, or a short one, must be found all the same.
@Suite("Path table")
struct PathTableTests {
    static let first = "/org/bluez/hci0/dev_00_00_00_00_00_01"
    static let second = "/org/bluez/hci0/dev_00_00_00_00_00_02"

    @Test("a path found again is the same entry, and a change through its index stays")
    func remembered() throws {
        var table = PathTable<Int>()
        table[Self.first] = 1
        table[Self.second] = 2
        let found = table.index(of: Self.first)
        let index = try #require(found)
        table[at: index] += 10
        let foundAgain = table.index(of: Self.first)
        #expect(foundAgain == index)
        #expect(table[at: index] == 11)
        #expect(table[Self.first] == 11)
        #expect(table[Self.second] == 2)
    }

    @Test("after a path is removed and others added, a remembered path is looked up again")
    func forgottenOnChange() throws {
        var table = PathTable<Int>()
        table[Self.first] = 1
        #expect(table.index(of: Self.first) != nil)
        table.removeValue(forKey: Self.first)
        let gone = table.index(of: Self.first)
        #expect(gone == nil)
        for device in 0..<64 { table["/org/bluez/hci0/dev_\(device)"] = device }
        table[Self.first] = 7
        let added = table.index(of: Self.first)
        #expect(table[at: try #require(added)] == 7)
        // Removed and added back through the subscript, as the actor's path does, with another path in between.
        table[Self.first] = nil
        table[Self.second] = 8
        table[Self.first] = 9
        let moved = table.index(of: Self.first)
        #expect(table[at: try #require(moved)] == 9)
        let other = table.index(of: Self.second)
        #expect(table[at: try #require(other)] == 8)
    }

    @Test("an unknown path is not found, and looking it up again does not find a remembered one")
    func unknown() {
        var table = PathTable<Int>()
        table[Self.first] = 1
        let first = table.index(of: Self.second)
        let again = table.index(of: Self.second)
        #expect(first == nil)
        #expect(again == nil)
    }

    /// A path made anew from its bytes: the same text in another String, its bytes elsewhere.
    private static func copy(_ path: String) -> String { String(decoding: Array(path.utf8), as: UTF8.self) }

    /// The value the table finds for `path`, through `index(of:)`; nil when it finds none.
    private static func found(_ path: String, in table: inout PathTable<Int>) -> Int? {
        table.index(of: path).map { table[at: $0] }
    }

    @Test("the same path in another String, and a path short enough to be kept inline, are found")
    func otherStringsAndShortPaths() {
        var table = PathTable<Int>()
        let paths = (0..<100).map { "/org/bluez/hci0/dev_00_00_00_00_00_\($0 / 10)\($0 % 10)" }
        for (value, path) in paths.enumerated() { table[path] = value }
        table["/dev_1"] = 1_000
        table["/dev_2"] = 2_000
        for _ in 0..<2 {
            for (value, path) in paths.enumerated() {
                #expect(Self.found(path, in: &table) == value, "\(path)")
                #expect(Self.found(Self.copy(path), in: &table) == value, "\(path) copied")
            }
            #expect(Self.found("/dev_1", in: &table) == 1_000)
            #expect(Self.found("/dev_2", in: &table) == 2_000)
        }
        #expect(Self.found(Self.copy("/org/bluez/hci0/dev_00_00_00_00_02_00"), in: &table) == nil)
    }

    @Test("a path remembered and then removed is not found, and one added after it is")
    func rememberedThenRemoved() {
        var table = PathTable<Int>()
        let paths = (0..<40).map { "/org/bluez/hci0/dev_00_00_00_00_01_\($0 / 10)\($0 % 10)" }
        for (value, path) in paths.enumerated() { table[path] = value }
        for path in paths { _ = table.index(of: path) }
        // Removed through the subscript: a remembered index would now be stale.
        for path in paths.prefix(20) { table[path] = nil }
        for path in paths.prefix(20) { #expect(Self.found(path, in: &table) == nil, "\(path)") }
        for (value, path) in paths.enumerated().dropFirst(20) { #expect(Self.found(path, in: &table) == value) }
        table[paths[0]] = 99
        #expect(Self.found(paths[0], in: &table) == 99)
    }

    @Test("more paths than the remembered slots hold, looked up in turns, are each found at their own entry")
    func crowded() {
        var table = PathTable<Int>()
        // Past a quarter of the largest room, slot pairs are shared by several paths that push each other out.
        let paths = (0..<3_000).map { "/org/bluez/hci0/dev_00_00_00_00_\($0 / 100)_\($0 % 100)" }
        for (value, path) in paths.enumerated() { table[path] = value }
        for round in 0..<3 {
            for (value, path) in paths.enumerated() {
                #expect(Self.found(path, in: &table) == value, "\(path), round \(round)")
            }
        }
        #expect(Self.found(Self.copy("/org/bluez/hci0/dev_00_00_00_00_99_99"), in: &table) == nil)
    }
}
