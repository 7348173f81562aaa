import BluetoothCore
import Testing

/// The byte helpers of the advertisement path: comparisons by `memcmp`, and a payload replaced in its own room.
@Suite struct BytesTests {
    @Test func sameBytesAndSameUTF8AreComparedWhole() {
        #expect([1, 2, 3].hasSameBytes(as: [1, 2, 3]))
        #expect(![1, 2, 3].hasSameBytes(as: [1, 2, 4]))
        #expect(![1, 2].hasSameBytes(as: [1, 2, 3]))
        #expect([UInt8]().hasSameBytes(as: []))
        let text = "0000fcd2-0000-1000-8000-00805f9b34fb"
        let bytes = Array(text.utf8)
        #expect(bytes.withUnsafeBytes { text.hasUTF8($0) })
        #expect(bytes.dropLast().withUnsafeBytes { !text.hasUTF8($0) })
        #expect([UInt8]().withUnsafeBytes { "".hasUTF8($0) })
    }

    @Test func contentsAreReplacedInTheArraysOwnRoomWhenTheCountIsTheSame() {
        var payload: [UInt8] = [1, 2, 3]
        let room = payload.withUnsafeBufferPointer { $0.baseAddress }
        [UInt8]([7, 8, 9]).withUnsafeBytes { payload.replaceContents(with: $0) }
        #expect(payload == [7, 8, 9])
        #expect(payload.withUnsafeBufferPointer { $0.baseAddress } == room)
        [UInt8]([4, 5]).withUnsafeBytes { payload.replaceContents(with: $0) }
        #expect(payload == [4, 5])
        [UInt8]().withUnsafeBytes { payload.replaceContents(with: $0) }
        #expect(payload.isEmpty)
        // A copy someone else holds keeps its bytes.
        payload = [1, 1]
        let held = payload
        [UInt8]([2, 2]).withUnsafeBytes { payload.replaceContents(with: $0) }
        #expect(held == [1, 1] && payload == [2, 2])
    }
}
