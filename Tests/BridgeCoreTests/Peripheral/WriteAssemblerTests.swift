import BridgeCore
import Testing

@Suite struct WriteAssemblerTests {
    let central = "/org/bluez/hci0/dev_11_22_33_44_55_66"

    @Test func aWriteAtOffsetZeroIsTheWholeValue() {
        var assembler = WriteAssembler(maximumLength: 64)
        #expect(
            assembler.writeArrived([1, 2, 3], offset: 0, prepareAuthorize: false, device: central)
                == .publish([1, 2, 3]))
        // A long value (joined by bluetoothd before the Execute) arrives as one call, whatever its length.
        let long = [UInt8](0..<60)
        #expect(assembler.writeArrived(long, offset: 0, prepareAuthorize: false, device: central) == .publish(long))
    }

    @Test func aPrepareAuthorizeCallIsJudgedButNotPublished() {
        var assembler = WriteAssembler(maximumLength: 8)
        #expect(assembler.writeArrived([1, 2], offset: 0, prepareAuthorize: true, device: central) == .authorized)
        #expect(
            assembler.writeArrived([1, 2], offset: 7, prepareAuthorize: true, device: central) == .reject(.tooLong(9)))
        // Nothing was kept: a later write at an offset has no base.
        #expect(
            assembler.writeArrived([3], offset: 1, prepareAuthorize: false, device: central)
                == .reject(.invalidOffset(offset: 1, length: 0)))
    }

    @Test func aRunAtALaterOffsetOverwritesTheCentralsLastValueFromThere() {
        var assembler = WriteAssembler(maximumLength: 64)
        _ = assembler.writeArrived([1, 2, 3, 4], offset: 0, prepareAuthorize: false, device: central)
        #expect(
            assembler.writeArrived([9, 9], offset: 2, prepareAuthorize: false, device: central)
                == .publish([1, 2, 9, 9]))
        #expect(
            assembler.writeArrived([7], offset: 4, prepareAuthorize: false, device: central)
                == .publish([1, 2, 9, 9, 7]))
        #expect(
            assembler.writeArrived([7], offset: 9, prepareAuthorize: false, device: central)
                == .reject(.invalidOffset(offset: 9, length: 5)))
        // Another central has its own base.
        #expect(
            assembler.writeArrived([7], offset: 1, prepareAuthorize: false, device: "/other")
                == .reject(.invalidOffset(offset: 1, length: 0)))
    }

    @Test func aValueLongerThanTheCharacteristicAllowsIsRefusedWhole() {
        var assembler = WriteAssembler(maximumLength: 64)
        #expect(
            assembler.writeArrived(
                [UInt8](repeating: 9, count: 70), offset: 0, prepareAuthorize: false, device: central)
                == .reject(.tooLong(70)))
        _ = assembler.writeArrived(
            [UInt8](repeating: 1, count: 60), offset: 0, prepareAuthorize: false, device: central)
        #expect(
            assembler.writeArrived(
                [UInt8](repeating: 2, count: 10), offset: 60, prepareAuthorize: false, device: central)
                == .reject(.tooLong(70)))
    }

    @Test func aDisconnectedCentralLeavesNoBase() {
        var assembler = WriteAssembler(maximumLength: 64)
        _ = assembler.writeArrived([1, 2, 3], offset: 0, prepareAuthorize: false, device: central)
        assembler.centralDisconnected(central)
        #expect(
            assembler.writeArrived([4], offset: 1, prepareAuthorize: false, device: central)
                == .reject(.invalidOffset(offset: 1, length: 0)))
    }
}
