/// Which pages of a loaded shared library hold only its dynamic-linking tables.
///
/// GNU ld lays a shared library out as a read-only segment at file offset 0 with the ELF and program headers and the
/// tables only the dynamic loader reads (`.gnu.hash`, `.dynsym`, `.dynstr`, symbol versions, `.rela.dyn`,
/// `.rela.plt`), then the code, then the read-only data with the unwind tables, then the writable data. The loader
/// reads those tables once, to relocate the library and bind its symbols; afterwards they stay mapped and resident
/// (about 2 MiB for the libraries the daemon links, libcrypto's alone 0.8 MiB) although nothing reads them again
/// unless a library is opened or a symbol looked up later. Those are clean pages of the file: dropping them from the
/// process's page tables loses nothing, and an access faults them in again from the page cache.
package enum LoaderTables {
    /// The pages, as offsets into the object's first segment (which starts at file offset 0), that hold nothing but
    /// the headers' tail and the loader's tables; nil when the layout is not the one described above.
    ///
    /// The first page is kept: it holds the program headers, which `dl_iterate_phdr` hands to the unwinder. A segment
    /// that is writable or executable, or that holds the unwind table header, the dynamic section or thread-local
    /// data (as lld's layout puts `.rodata` and `.eh_frame_hdr` in the first segment), is not one to drop.
    package static func loaderOnlyRange(of headers: [ELFProgramHeader], pageSize: UInt64) -> Range<UInt64>? {
        guard pageSize > 0, pageSize & (pageSize - 1) == 0,
            let first = headers.first(where: { $0.type == ELFProgramHeader.load && $0.offset == 0 }),
            first.flags == ELFProgramHeader.readable, first.virtualAddress % pageSize == 0,
            first.fileSize == first.memorySize
        else { return nil }
        let segment = first.virtualAddress..<first.end
        let heldElsewhere = [ELFProgramHeader.ehFrameHeader, ELFProgramHeader.dynamic, ELFProgramHeader.tls]
        for header in headers where heldElsewhere.contains(header.type) {
            if segment.overlaps(header.virtualAddress..<max(header.end, header.virtualAddress + 1)) { return nil }
        }
        // The code must follow it: otherwise this is not the separate-code layout, and the segment may hold more.
        guard
            headers.contains(where: {
                $0.type == ELFProgramHeader.load && $0.flags & ELFProgramHeader.executable != 0
                    && $0.virtualAddress >= first.end
            })
        else { return nil }
        let end = first.fileSize & ~(pageSize - 1)
        return pageSize < end ? pageSize..<end : nil
    }
}
