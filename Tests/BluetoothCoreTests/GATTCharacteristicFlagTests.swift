import BluetoothCore
import Testing

@Suite struct GATTCharacteristicFlagTests {
    @Test func securityVariantsImplyTheirBaseProperty() {
        #expect(GATTCharacteristicFlag.encryptRead.impliedProperty == .read)
        #expect(GATTCharacteristicFlag.secureWrite.impliedProperty == .write)
        #expect(GATTCharacteristicFlag.encryptAuthenticatedNotify.impliedProperty == .notify)
        #expect(GATTCharacteristicFlag.secureIndicate.impliedProperty == .indicate)
        #expect(GATTCharacteristicFlag.authorize.impliedProperty == nil)
        #expect([GATTCharacteristicFlag.encryptRead, .authorize].impliedProperties == [.read])
    }

    @Test func everyFlagRoundTripsThroughItsBlueZString() throws {
        for flag in GATTCharacteristicFlag.allCases {
            #expect(try GATTCharacteristicFlag(parsing: flag.rawValue) == flag)
        }
        #expect(GATTCharacteristicFlag.allCases.count == 23)
    }

    @Test func descriptorsAcceptOnlyReadWriteAndAuthorizeFlags() {
        #expect(GATTCharacteristicFlag.encryptAuthenticatedWrite.isAllowedOnDescriptor)
        #expect(GATTCharacteristicFlag.authorize.isAllowedOnDescriptor)
        #expect(!GATTCharacteristicFlag.notify.isAllowedOnDescriptor)
    }

    @Test func unknownFlagsAreNamedInTheError() {
        #expect(throws: BluetoothValueError("\"notfy\" is not a BlueZ characteristic flag")) {
            try GATTCharacteristicFlag(parsing: "notfy")
        }
    }
}
