import BridgeCore
import Testing

@Suite struct SetCommandTests {
    private func parse(_ text: String) throws -> SetCommand { try SetCommand(payload: Array(text.utf8)) }

    @Test func rawPayloadsAreTakenAsTheValue() throws {
        #expect(try parse("21.5") == SetCommand(value: Array("21.5".utf8)))
        #expect(try parse(#"{"mode":"on"}"#).value == Array(#"{"mode":"on"}"#.utf8))
        #expect(try parse("{not json").value == Array("{not json".utf8))
    }

    @Test func envelopesCarryValueAndTransaction() throws {
        let command = try parse(#" {"value": "open", "transaction": "t-1"}"#)
        #expect(command.value == Array("open".utf8))
        #expect(command.transaction == .string("t-1"))
        #expect(try parse(#"{"value": 42}"#).value == Array("42".utf8))
        #expect(try parse(#"{"value": true}"#).value == Array("true".utf8))
        #expect(throws: CodecError.self) { try parse(#"{"value": null}"#) }
    }

    @Test func resultsEchoTheTransaction() {
        let ok = SetResult.success.payload(transaction: .number("7"))
        #expect(String(decoding: ok, as: UTF8.self) == #"{"ok":true,"transaction":7}"#)
        let failure = SetResult.failure(error: "org.bluez.Error.NotPermitted", message: "Write not permitted")
        #expect(
            String(decoding: failure.payload(transaction: nil), as: UTF8.self)
                == #"{"ok":false,"error":"org.bluez.Error.NotPermitted","message":"Write not permitted"}"#)
    }
}
