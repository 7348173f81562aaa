import DBus
import Testing

@Suite("D-Bus match rule strings", .timeLimit(.minutes(5)))
struct DBusMatchRuleTests {
    @Test("a rule lists only the keys it sets, in the bus's syntax")
    func ruleStringHasSetKeys() {
        let rule = DBusMatchRule(
            sender: "org.bluez", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
            pathNamespace: "/org/bluez/hci0", arg0: "org.bluez.Device1")
        #expect(
            rule.ruleString == "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties',"
                + "member='PropertiesChanged',path_namespace='/org/bluez/hci0',arg0='org.bluez.Device1'")
        #expect(DBusMatchRule().ruleString == "type='signal'")
    }

    @Test("an apostrophe in a value is escaped as the bus expects")
    func apostropheIsEscaped() {
        #expect(DBusMatchRule(arg0: "it's").ruleString == #"type='signal',arg0='it'\''s'"#)
    }
}
