import Testing

@testable import CentralBridge

/// The advert publisher's device table remembers where it found a path last; whatever changes which paths it holds
/// must make it look again, or a remembered index would point at another device (or trap).
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
}
