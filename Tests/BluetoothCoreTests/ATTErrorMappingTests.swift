import BluetoothCore
import Testing

@Suite struct ATTErrorMappingTests {
    @Test func namesCodesAcrossTheWholeRange() {
        #expect(ATTError.invalidHandle.name == "Invalid Handle")
        #expect(ATTError.insufficientResources.description == "0x11 Insufficient Resources")
        #expect(ATTError(code: 0x85).isApplicationError)
        #expect(ATTError.application(0x1F) == ATTError(code: 0x9F))
        #expect(ATTError.application(0x20) == nil)
        #expect(ATTError.outOfRange.isCommonProfileError)
        #expect(ATTError(code: 0x50).name == "Reserved")
    }

    struct ServerCase: Sendable, CustomTestStringConvertible {
        let name: BlueZErrorName, message: String, operation: GATTOperation, expected: ATTError
        var testDescription: String { "\(name) \"\(message)\" → \(expected)" }
    }

    @Test(arguments: [
        ServerCase(name: .failed, message: "0x85", operation: .write, expected: ATTError(code: 0x85)),
        ServerCase(name: .failed, message: "0x9f", operation: .read, expected: ATTError(code: 0x9F)),
        ServerCase(name: .failed, message: "0xA0", operation: .read, expected: ATTError(code: 0x80)),
        ServerCase(name: .failed, message: "boom", operation: .read, expected: ATTError(code: 0x80)),
        ServerCase(name: .notSupported, message: "", operation: .read, expected: .requestNotSupported),
        ServerCase(name: .notAuthorized, message: "", operation: .write, expected: .insufficientAuthorization),
        ServerCase(name: .invalidValueLength, message: "", operation: .write, expected: .invalidAttributeValueLength),
        ServerCase(name: .invalidOffset, message: "", operation: .read, expected: .invalidOffset),
        ServerCase(name: .inProgress, message: "", operation: .write, expected: .procedureAlreadyInProgress),
        ServerCase(name: .improperlyConfigured, message: "", operation: .write, expected: .cccdImproperlyConfigured),
        ServerCase(name: .notPermitted, message: "", operation: .read, expected: .readNotPermitted),
        ServerCase(name: .notPermitted, message: "", operation: .write, expected: .writeNotPermitted),
        ServerCase(name: .doesNotExist, message: "", operation: .read, expected: .unlikelyError),
    ])
    func serverSideMapsApplicationErrorsLikeBluetoothd(testCase: ServerCase) {
        #expect(
            ATTError.sentToRemote(
                forApplicationError: testCase.name, message: testCase.message,
                during: testCase.operation) == testCase.expected)
    }

    @Test func clientSideMapsATTErrorsLikeBluetoothd() {
        #expect(ATTError.readNotPermitted.replyToClient.name == .notPermitted)
        #expect(ATTError.insufficientEncryption.replyToClient == BlueZErrorReply(.notPermitted, "Not paired"))
        #expect(ATTError.invalidOffset.replyToClient == BlueZErrorReply(.invalidArguments, "Invalid offset"))
        #expect(
            ATTError.invalidAttributeValueLength.replyToClient == BlueZErrorReply(.invalidArguments, "Invalid Length"))
        #expect(ATTError.insufficientAuthorization.replyToClient.name == .notAuthorized)
        #expect(ATTError.requestNotSupported.replyToClient.name == .notSupported)
        let other = ATTError(code: 0x85).replyToClient
        #expect(other == BlueZErrorReply(.failed, "Operation failed with ATT error: 0x85"))
        #expect(ATTError(clientReply: other) == ATTError(code: 0x85))
        #expect(ATTError(clientReply: BlueZErrorReply(.failed, "Not connected")) == nil)
    }
}
