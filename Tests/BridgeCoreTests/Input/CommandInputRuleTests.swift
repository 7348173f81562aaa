import BridgeCore
import MQTTCore
import Testing

/// The rules applied to a command before it is parsed: retained messages, sizes and the Response Topic.
@Suite struct CommandInputRuleTests {
    static let rule = ResponseTopicRule(
        baseTopic: "home/gw",
        subscriptions: ["home/gw/lock/control/set", "home/gw/bridge/request/+", "sensors/+/temperature"].map {
            try! MQTTTopicFilter($0)
        })

    @Test func responseTopicsUnderTheBaseTopicOrSubscribedAreRefused() {
        #expect(Self.rule.problem(with: "client/replies") == nil)
        #expect(Self.rule.problem(with: "home/gwx/reply") == nil)
        #expect(Self.rule.problem(with: "home/gw/lock/control/set") != nil)
        #expect(Self.rule.problem(with: "home/gw/bridge/request/remove") != nil)
        #expect(Self.rule.problem(with: "home/gw/lock/availability") != nil)
        #expect(Self.rule.problem(with: "home/gw") != nil)
        #expect(Self.rule.problem(with: "sensors/kitchen/temperature")?.contains("sensors/+/temperature") == true)
        #expect(Self.rule.problem(with: "$SYS/broker") != nil)
        #expect(Self.rule.problem(with: "a/+/b") != nil)
        #expect(Self.rule.problem(with: "") != nil)
    }

    @Test func retainedCommandsAreRefusedFirst() {
        #expect(
            CommandRefusal.check(
                retained: true, payloadSize: 9_999, limit: 10, responseTopic: "home/gw/x",
                rule: Self.rule) == .retained)
        #expect(
            CommandRefusal.check(
                retained: false, payloadSize: 11, limit: 10, responseTopic: nil,
                rule: Self.rule) == .oversize(size: 11, limit: 10))
        #expect(
            CommandRefusal.check(
                retained: false, payloadSize: 10, limit: 10, responseTopic: nil,
                rule: Self.rule) == nil)
        #expect(
            CommandRefusal.check(
                retained: false, payloadSize: 1, limit: 10, responseTopic: "client/r",
                rule: Self.rule) == nil)
        let forbidden = CommandRefusal.check(
            retained: false, payloadSize: 1, limit: 10, responseTopic: "home/gw/lock/control/set", rule: Self.rule)
        #expect(forbidden?.metricReason == "response_topic")
        #expect(forbidden?.errorKind == "ForbiddenResponseTopic")
    }

    @Test func payloadExcerptsAreShortAndEscaped() {
        #expect(PayloadExcerpt.quote(Array("on".utf8)) == #""on""#)
        #expect(PayloadExcerpt.quote(Array("a\"b\\c\n\r\t".utf8)) == #""a\"b\\c\n\r\t""#)
        #expect(PayloadExcerpt.quote([0x00, 0x1B, 0xFF]) == #""\x00\x1b\xff""#)
        let long = PayloadExcerpt.quote([UInt8](repeating: UInt8(ascii: "z"), count: 30_000_000))
        #expect(long == "\"" + String(repeating: "z", count: 32) + "…\" (30000000 bytes)")
    }

    @Test func logRateLimiterLetsABurstThroughPerWindowAndCountsTheRest() {
        var limiter = LogRateLimiter(burst: 2, window: .seconds(60))
        #expect(limiter.report("k", at: .seconds(0)) == .log(suppressed: 0))
        #expect(limiter.report("k", at: .seconds(1)) == .log(suppressed: 0))
        #expect(limiter.report("k", at: .seconds(2)) == .suppress)
        #expect(limiter.report("k", at: .seconds(3)) == .suppress)
        #expect(limiter.report("other", at: .seconds(3)) == .log(suppressed: 0))
        #expect(limiter.report("k", at: .seconds(61)) == .log(suppressed: 2))
        #expect(limiter.report("k", at: .seconds(62)) == .log(suppressed: 0))
    }

    @Test func logRateLimiterKeepsABoundedNumberOfKeys() {
        var limiter = LogRateLimiter(burst: 1, window: .seconds(60), maximumKeys: 4)
        for index in 0..<1000 {
            #expect(limiter.report("topic/\(index)", at: .milliseconds(index)) == .log(suppressed: 0))
        }
    }
}
