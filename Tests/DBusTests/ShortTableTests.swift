import Testing

@testable import DBus

/// The connection's short tables (libdbus's watches, tracked owners) behave as a dictionary does.
@Suite("Short table")
struct ShortTableTests {
    @Test("set, replace, read and remove by key, as a dictionary")
    func likeADictionary() {
        var table = ShortTable<String, Int>()
        #expect(table.isEmpty)
        table["org.bluez"] = 1
        table["org.freedesktop.DBus"] = 2
        table["org.bluez"] = 3
        #expect(table["org.bluez"] == 3)
        #expect(table["org.freedesktop.DBus"] == 2)
        #expect(table["org.gattway"] == nil)
        table["org.bluez"]! += 1
        #expect(table["org.bluez"] == 4)
        table["org.bluez"] = nil
        #expect(table["org.bluez"] == nil)
        #expect(table.removeValue(forKey: "org.freedesktop.DBus") == 2)
        #expect(table.removeValue(forKey: "org.freedesktop.DBus") == nil)
        #expect(table.isEmpty)
        table["org.gattway"] = 5
        table.removeAll()
        #expect(table.isEmpty)
    }
}
