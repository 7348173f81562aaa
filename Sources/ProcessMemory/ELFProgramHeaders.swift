/// The program headers of an ELF64 little-endian object, as the dynamic loader reads them: enough to tell which pages
/// of a loaded library hold nothing but the tables the loader itself reads.
package struct ELFProgramHeader: Equatable, Sendable {
    package static let load: UInt32 = 1
    package static let dynamic: UInt32 = 2
    package static let tls: UInt32 = 7
    package static let ehFrameHeader: UInt32 = 0x6474_e550

    package static let executable: UInt32 = 1
    package static let readable: UInt32 = 4

    package var type: UInt32
    package var flags: UInt32
    package var offset: UInt64
    package var virtualAddress: UInt64
    package var fileSize: UInt64
    package var memorySize: UInt64

    package init(
        type: UInt32, flags: UInt32, offset: UInt64, virtualAddress: UInt64, fileSize: UInt64, memorySize: UInt64
    ) {
        self.type = type
        self.flags = flags
        self.offset = offset
        self.virtualAddress = virtualAddress
        self.fileSize = fileSize
        self.memorySize = memorySize
    }

    var end: UInt64 { virtualAddress &+ memorySize }
}

/// Why a buffer is not the start of an ELF object this process could have loaded.
package enum ELFHeaderError: Error, Equatable, Sendable {
    case notELF
    case notSixtyFourBitLittleEndian
    case programHeadersOutside
}

extension ELFProgramHeader {
    /// The program headers of the object whose first bytes (its ELF header, and the program headers it points to)
    /// are `bytes`. Every offset is checked against the buffer: a truncated or odd header throws, never traps.
    package static func parse(objectStart bytes: UnsafeRawBufferPointer) throws(ELFHeaderError) -> [ELFProgramHeader] {
        guard bytes.count >= 64, bytes[0] == 0x7f, bytes[1] == 0x45, bytes[2] == 0x4c, bytes[3] == 0x46 else {
            throw .notELF
        }
        // EI_CLASS 2 is ELFCLASS64, EI_DATA 1 is little-endian: the only objects an x86-64 or arm64 Linux maps.
        guard bytes[4] == 2, bytes[5] == 1 else { throw .notSixtyFourBitLittleEndian }
        let tableOffset = bytes.loadLittleEndian(UInt64.self, at: 32)
        let entrySize = UInt64(bytes.loadLittleEndian(UInt16.self, at: 54))
        let count = UInt64(bytes.loadLittleEndian(UInt16.self, at: 56))
        guard entrySize >= 56, tableOffset <= UInt64(bytes.count),
            count * entrySize <= UInt64(bytes.count) - tableOffset
        else { throw .programHeadersOutside }
        return (0..<Int(count)).map { index in
            let at = Int(tableOffset) + index * Int(entrySize)
            return ELFProgramHeader(
                type: bytes.loadLittleEndian(UInt32.self, at: at),
                flags: bytes.loadLittleEndian(UInt32.self, at: at + 4),
                offset: bytes.loadLittleEndian(UInt64.self, at: at + 8),
                virtualAddress: bytes.loadLittleEndian(UInt64.self, at: at + 16),
                fileSize: bytes.loadLittleEndian(UInt64.self, at: at + 32),
                memorySize: bytes.loadLittleEndian(UInt64.self, at: at + 40))
        }
    }
}

extension UnsafeRawBufferPointer {
    fileprivate func loadLittleEndian<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
        T(littleEndian: loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}
