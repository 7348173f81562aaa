import BluetoothCore
import Glibc
import Testing

@testable import BlueZ

@Suite(.timeLimit(.minutes(5))) struct PeripheralSocketPairTests {
    @Test func datagramsKeepTheirBoundaries() throws {
        let pair = try SeqPacketSocketPair()
        defer {
            close(pair.local)
            close(pair.remote)
        }
        for value in [[UInt8]([1, 2, 3]), [4], [5, 6]] {
            #expect(
                value.withUnsafeBytes { send(pair.local, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == value.count
            )
        }
        var buffer = [UInt8](repeating: 0, count: 64)
        var received: [[UInt8]] = []
        for _ in 0..<3 {
            let count = buffer.withUnsafeMutableBytes { recv(pair.remote, $0.baseAddress, 64, 0) }
            received.append(Array(buffer[0..<count]))
        }
        #expect(received == [[1, 2, 3], [4], [5, 6]])
    }

    @Test func aFullSocketSaysEAGAIN() throws {
        let pair = try SeqPacketSocketPair()
        defer {
            close(pair.local)
            close(pair.remote)
        }
        let value = [UInt8](repeating: 7, count: 20)
        var sent = 0
        while sent < 1_000_000 {
            let result = value.withUnsafeBytes { send(pair.local, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if result < 0 {
                #expect(errno == EAGAIN)
                break
            }
            sent += 1
        }
        #expect(sent > 0 && sent < 1_000_000)
    }

    @Test func deviceAddressComesFromTheDevicePath() {
        let options = GATTRequestOptions(device: "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_01")
        #expect(options.deviceAddress == "AA:BB:CC:DD:EE:01")
        #expect(GATTRequestOptions().deviceAddress == nil)
    }
}
