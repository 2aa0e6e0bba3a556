extension MachOFile {
    /// The most slices a fat header may declare: Apple's tools write a handful, while a Java
    /// class file, which starts with the same `0xCAFEBABE`, has its version (45 or more)
    /// where `nfat_arch` would be.
    public static let maximumSlices: UInt32 = 32

    /// The 64-bit slices of the fat file in `reader`, in header order.
    ///
    /// The fat header is big-endian: `magic`, `nfat_arch`, then `fat_arch` entries of 20
    /// bytes (`cputype`, `cpusubtype`, `offset`, `size`, `align`), or for `0xCAFEBABF` of 32
    /// bytes with 64-bit `offset` and `size`. Slices of a 32-bit CPU type (armv7, i386) are
    /// skipped; a file with no 64-bit slice is refused.
    /// - Throws: ``ObjectFileError`` for a header that is not a fat Mach-O one, a slice
    ///   outside the file, or a slice that does not parse.
    static func slices(of reader: ByteReader) throws(ObjectFileError) -> [MachOFile] {
        let wide = try reader.uint32(at: 0, field: "magic", bigEndian: true) == fatMagic64
        let count = try reader.uint32(at: 4, field: "nfat_arch", bigEndian: true)
        guard count <= maximumSlices else {
            if !wide {
                throw reader.error(.unsupported, "nfat_arch", at: 4,
                                   "0xCAFEBABE with nfat_arch \(count) (more than \(maximumSlices)): probably a Java class file, not a fat Mach-O file")
            }
            throw reader.error(.tooMany, "nfat_arch", at: 4, "nfat_arch \(count) is more than the \(maximumSlices) slices a fat Mach-O file may have")
        }
        guard count > 0 else {
            throw reader.error(.malformed, "nfat_arch", at: 4, "a fat Mach-O file with no slice")
        }
        let entrySize: UInt64 = wide ? 32 : 20
        var slices: [MachOFile] = []
        for index in 0..<UInt64(count) {
            let at = 8 + index * entrySize
            let cpuType = try reader.uint32(at: at, field: "cputype of fat_arch \(index)", bigEndian: true)
            let offset = wide
                ? try reader.uint64(at: at + 8, field: "offset of fat_arch \(index)", bigEndian: true)
                : UInt64(try reader.uint32(at: at + 8, field: "offset of fat_arch \(index)", bigEndian: true))
            let size = wide
                ? try reader.uint64(at: at + 16, field: "size of fat_arch \(index)", bigEndian: true)
                : UInt64(try reader.uint32(at: at + 12, field: "size of fat_arch \(index)", bigEndian: true))
            guard cpuType & 0x0100_0000 != 0 else { continue } // CPU_ARCH_ABI64 clear: a 32-bit slice
            let slice = try reader.window(at: offset, length: size, field: "offset and size of fat_arch \(index)")
            slices.append(try MachOFile(slice))
        }
        guard !slices.isEmpty else {
            throw reader.error(.unsupported, "cputype of fat_arch 0", at: 8, "a fat file with only 32-bit slices: only 64-bit Mach-O is read")
        }
        return slices
    }
}
