import MQTTCore
import Testing

@Suite struct MQTTTopicFilterTests {
    static let matchTable: [(filter: String, topic: String, matches: Bool)] = [
        ("a/b/c", "a/b/c", true),
        ("a/b/c", "a/b", false),
        ("a/b", "a/b/c", false),
        ("a/+/c", "a/b/c", true),
        ("a/+/c", "a//c", true),
        ("a/+/c", "a/b/d", false),
        ("+", "a", true),
        ("+", "a/b", false),
        ("+/+", "/a", true),
        ("a/#", "a", true),
        ("a/#", "a/b/c", true),
        ("a/#", "ab", false),
        ("#", "a/b", true),
        ("#", "/", true),
        ("+/#", "a", true),
        ("#", "$SYS/broker/uptime", false),
        ("+/broker/uptime", "$SYS/broker/uptime", false),
        ("$SYS/#", "$SYS/broker/uptime", true),
        ("$SYS/+/uptime", "$SYS/broker/uptime", true),
        ("gattway/+/availability", "gattway/kitchen/availability", true),
        ("gattway/+/availability", "gattway/kitchen/heart_rate", false),
        ("a/b/", "a/b/", true),
        ("a/b/", "a/b", false),
    ]

    @Test(arguments: matchTable)
    func matchesAsTheSpecificationSays(_ row: (filter: String, topic: String, matches: Bool)) throws {
        let filter = try MQTTTopicFilter(row.filter)
        #expect(filter.matches(row.topic) == row.matches, "\(row.filter) vs \(row.topic)")
    }

    @Test(arguments: ["a/#/b", "a#", "a/b+", "+a", "", "a/\u{0}"])
    func refusesInvalidFilters(_ text: String) {
        #expect(throws: MQTTError.self) { try MQTTTopicFilter(text) }
    }

    @Test func reportsWildcards() throws {
        #expect(try MQTTTopicFilter("a/+/c").hasWildcards)
        #expect(try !MQTTTopicFilter("a/b/c").hasWildcards)
    }
}
