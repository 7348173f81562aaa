import Glibc
import Testing

@testable import ProcessMemory

/// Which pages of a library count as the loader's alone, from program headers as GNU ld and lld lay them out.
struct LoaderTablesRangeTests {
    static let page: UInt64 = 4096

    static func load(_ flags: UInt32, offset: UInt64, address: UInt64, size: UInt64) -> ELFProgramHeader {
        .init(
            type: ELFProgramHeader.load, flags: flags, offset: offset, virtualAddress: address, fileSize: size,
            memorySize: size)
    }

    static func header(_ type: UInt32, address: UInt64, size: UInt64) -> ELFProgramHeader {
        .init(type: type, flags: 4, offset: address, virtualAddress: address, fileSize: size, memorySize: size)
    }

    /// libcrypto.so.3 of Debian 12, as `readelf -l` shows it.
    static let gnuLayout: [ELFProgramHeader] = [
        load(4, offset: 0, address: 0, size: 0x0c_4b30),
        load(5, offset: 0x0c_5000, address: 0x0c_5000, size: 0x27_c6a9),
        load(4, offset: 0x34_2000, address: 0x34_2000, size: 0x0d_d6b0),
        load(6, offset: 0x41_fe90, address: 0x42_0e90, size: 0x06_3698),
        header(ELFProgramHeader.dynamic, address: 0x47_ba70, size: 0x210),
        header(ELFProgramHeader.ehFrameHeader, address: 0x39_b858, size: 0x1_5504),
    ]

    @Test func aGNULaidOutLibraryGivesItsFirstSegmentButTheHeaderPageAndThePartlyUsedLastPage() {
        #expect(LoaderTables.loaderOnlyRange(of: Self.gnuLayout, pageSize: Self.page) == 0x1000..<0xc_4000)
    }

    @Test func anLLDLaidOutObjectWithItsUnwindTablesInTheFirstSegmentGivesNothing() {
        let lld: [ELFProgramHeader] = [
            Self.load(4, offset: 0, address: 0, size: 0x1b_0000),
            Self.load(5, offset: 0x1b_0000, address: 0x1b_1000, size: 0x60_0000),
            Self.header(ELFProgramHeader.ehFrameHeader, address: 0x18_0000, size: 0x1_0000),
        ]
        #expect(LoaderTables.loaderOnlyRange(of: lld, pageSize: Self.page) == nil)
    }

    @Test func aFirstSegmentThatIsExecutableOrWritableGivesNothing() {
        for flags: UInt32 in [5, 6, 7] {
            var headers = Self.gnuLayout
            headers[0].flags = flags
            #expect(LoaderTables.loaderOnlyRange(of: headers, pageSize: Self.page) == nil, "flags \(flags)")
        }
    }

    @Test func withoutCodeAfterTheFirstSegmentItIsNotTheLayoutDescribed() {
        var headers = Self.gnuLayout
        headers.remove(at: 1)
        #expect(LoaderTables.loaderOnlyRange(of: headers, pageSize: Self.page) == nil)
    }

    @Test func aFirstSegmentHoldingTheDynamicSectionOrThreadLocalDataGivesNothing() {
        for type in [ELFProgramHeader.dynamic, ELFProgramHeader.tls] {
            let headers = Self.gnuLayout + [Self.header(type, address: 0x2000, size: 0x10)]
            #expect(LoaderTables.loaderOnlyRange(of: headers, pageSize: Self.page) == nil, "type \(type)")
        }
    }

    @Test func aFirstSegmentOfOnePageGivesNothing() {
        var headers = Self.gnuLayout
        headers[0].fileSize = 0xd58
        headers[0].memorySize = 0xd58
        #expect(LoaderTables.loaderOnlyRange(of: headers, pageSize: Self.page) == nil)
    }

    @Test func largerPagesRoundBothEnds() {
        #expect(LoaderTables.loaderOnlyRange(of: Self.gnuLayout, pageSize: 65536) == 0x1_0000..<0xc_0000)
    }
}

struct ELFProgramHeaderParsingTests {
    @Test func theHeadersOfThisProcesssLibcAreRead() throws {
        let libc = try #require(
            try LoaderTables.currentMappings().first { $0.isObjectStart && $0.path.contains("/libc.so.6") })
        let bytes = UnsafeRawBufferPointer(start: UnsafeRawPointer(bitPattern: libc.start), count: 4096)
        let headers = try ELFProgramHeader.parse(objectStart: bytes)
        #expect(headers.contains { $0.type == ELFProgramHeader.load && $0.flags == 5 })
        #expect(headers.contains { $0.type == ELFProgramHeader.dynamic })
    }

    @Test func whatIsNotAnELFHeaderIsRefusedWithoutATrap() {
        var elf = [UInt8](repeating: 0, count: 64)
        elf[0...5] = [0x7f, 0x45, 0x4c, 0x46, 2, 1]
        func parse(_ bytes: [UInt8]) -> ELFHeaderError? {
            bytes.withUnsafeBytes { buffer -> ELFHeaderError? in
                do throws(ELFHeaderError) {
                    _ = try ELFProgramHeader.parse(objectStart: buffer)
                    return nil
                } catch { return error }
            }
        }
        #expect(parse(Array(elf[..<63])) == .notELF)
        #expect(parse([0x7f, 0x45, 0x4c, 0x47] + elf[4...]) == .notELF)
        #expect(parse(Array(elf[..<4]) + [1, 1] + elf[6...]) == .notSixtyFourBitLittleEndian)
        var outside = elf
        outside[32] = 64  // the table starts at the buffer's end …
        outside[54] = 56
        outside[56] = 1  // … and holds one entry
        #expect(parse(outside) == .programHeadersOutside)
        var huge = elf
        huge[32...39] = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]
        huge[54] = 56
        #expect(parse(huge) == .programHeadersOutside)
        var tooSmallEntries = outside
        tooSmallEntries[54] = 8
        #expect(parse(tooSmallEntries) == .programHeadersOutside)
        var none = elf
        none[54] = 56
        #expect(parse(none) == nil)
    }
}

struct ProcessMappingTests {
    @Test func aLineWithAPathAndOneWithout() {
        #expect(
            ProcessMapping(
                line: "7f12a0000000-7f12a0028000 r--p 00000000 08:01 1311 /usr/lib/x86_64-linux-gnu/libc.so.6")
                == ProcessMapping(
                    start: 0x7f12_a000_0000, end: 0x7f12_a002_8000, permissions: "r--p", offset: 0,
                    path: "/usr/lib/x86_64-linux-gnu/libc.so.6"))
        #expect(
            ProcessMapping(line: "7ffd1000-7ffd3000 rw-p 00000000 00:00 0 ")?.path == "")
        #expect(ProcessMapping(line: "55d0-55c0 r--p 00000000 08:01 1 /x") == nil)
        #expect(ProcessMapping(line: "zz-55c0 r--p 00000000 08:01 1 /x") == nil)
        #expect(ProcessMapping(line: "") == nil)
    }

    @Test func aPathWithSpacesIsKeptWhole() {
        #expect(ProcessMapping(line: "1000-2000 r--p 00000000 08:01 7   /opt/my lib/x.so")?.path == "/opt/my lib/x.so")
    }
}

/// The tables are really dropped from this process, and everything that reads them afterwards still works: they come
/// back from the file.
@Suite(.serialized)
struct LoaderTablesReleaseTests {
    static func residentKiB(ofFirstMappingOf name: String) throws -> Int {
        try #require(try LoaderTables.residentKiB(ofFirstSegmentOf: name), "no mapping of \(name)")
    }

    @Test func libcsTablesLeaveTheResidentSetAndALaterLookupStillFindsItsSymbols() throws {
        let before = try Self.residentKiB(ofFirstMappingOf: "/libc.so.6")
        #expect(before > 8, "libc's tables were resident before: \(before) KiB")
        // Other suites run in this process meanwhile, and a first call of a libc function there is bound through
        // these tables: it can fault them back between the release and the look at them. So the release is tried
        // a few times; it must leave them out of the resident set at least once.
        var attempts: [Int] = []
        for _ in 0..<5 {
            let released = try LoaderTables.release()
            #expect(released.libraries >= 1)
            #expect(released.bytes >= 64 << 10)
            attempts.append(try Self.residentKiB(ofFirstMappingOf: "/libc.so.6"))
            if attempts.last! <= 8 { break }
        }
        let after = attempts.last!
        #expect(after <= 8, "\(before) KiB before, \(attempts) KiB after each release")

        // A library opened now (zlib: part of every Debian system, loaded by nothing in this test process) is
        // relocated and bound against libc through the tables just dropped.
        let handle = try #require(dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL), "dlopen: \(String(cString: dlerror()))")
        defer { dlclose(handle) }
        let symbol = try #require(dlsym(handle, "zlibVersion"))
        let version = unsafeBitCast(symbol, to: (@convention(c) () -> UnsafePointer<CChar>).self)
        #expect(String(cString: version()).hasPrefix("1."))
        let strlenSymbol = try #require(dlsym(UnsafeMutableRawPointer(bitPattern: 0), "strlen"))
        let length = unsafeBitCast(strlenSymbol, to: (@convention(c) (UnsafePointer<CChar>) -> Int).self)
        #expect(length("gattway") == 7)
        #expect(try Self.residentKiB(ofFirstMappingOf: "/libc.so.6") > after)
    }
}
