import FramescopeSymbols
import Testing

/// Refusals: each names its code, field and file offset.
@Suite("ObjectFile refusals: code, field and offset")
struct ObjectFileErrorTests {
    /// The refusal of `bytes`, or nil when they were read.
    static func refusal(_ bytes: [UInt8]) -> ObjectFileError? {
        do throws(ObjectFileError) {
            _ = try ObjectFile.images(in: bytes)
            return nil
        } catch {
            return error
        }
    }

    /// The field of `path` named `name`.
    static func field(_ path: String, _ name: String) throws -> Field {
        try #require(FieldMap.fields(try Binaries.bytes(path)).first { $0.name == name })
    }

    @Test("Files that are no object file, or a variant that is not read, are refused by their magic or class",
          arguments: [
              ([], ObjectFileError.Code.truncated, "magic", "cut short"),
              (Array("hello, world".utf8), .badMagic, "magic", "not a Mach-O or ELF file: it starts with 0x68656C6C"),
              // A Java class file: 0xCAFEBABE, minor 0, major 52.
              ([0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 52, 0, 0], .unsupported, "nfat_arch", "Java class"),
              ([0xce, 0xfa, 0xed, 0xfe, 7, 0, 0, 1], .unsupported, "magic", "32-bit Mach-O"),
              ([0xfe, 0xed, 0xfa, 0xcf, 1, 0, 0, 7], .unsupported, "magic", "big-endian 64-bit Mach-O"),
              ([0x7f, 0x45, 0x4c, 0x46, 1, 1, 1, 0], .unsupported, "e_ident[EI_CLASS]", "32-bit ELF"),
              ([0x7f, 0x45, 0x4c, 0x46, 2, 2, 1, 0], .unsupported, "e_ident[EI_DATA]", "big-endian ELF"),
              ([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0], .truncated, "e_type", "cut short"),
              ([0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 0], .malformed, "nfat_arch", "no slice"),
          ] as [([UInt8], ObjectFileError.Code, String, String)])
    func magic(_ bytes: [UInt8], _ code: ObjectFileError.Code, _ field: String, _ text: String) throws {
        let error = try #require(Self.refusal(bytes))
        #expect(error.code == code)
        #expect(error.field == field)
        #expect(error.message.contains(text), "\(error)")
    }

    @Test("A description names the message, the field and the offset in decimal and hex")
    func description() {
        let error = ObjectFileError(.outOfBounds, field: "symoff", offset: 114_688 + 872, "symoff 9 is past the end")
        #expect(error.description == "symoff 9 is past the end (symoff, at byte 115560 = 0x1c368)")
    }

    @Test("Counts that cannot fit are refused as tooMany at the count's own file offset")
    func counts() throws {
        // arm64's ncmds (slice 1 of trash, at 114688 + 16) set past what sizeofcmds holds.
        let bytes = try Binaries.bytes(Binaries.trash)
        let ncmds = try Self.field(Binaries.trash, "ncmds of slice 1")
        #expect(ncmds.offset == 114_688 + 16)
        let manyCommands = try #require(Self.refusal(ncmds.set(ncmds.pastEnd, in: bytes)))
        #expect(manyCommands.code == .tooMany && manyCommands.field == "ncmds" && manyCommands.offset == 114_688 + 16)

        let nsyms = try Self.field(Binaries.demoApp, "nsyms")
        let manySymbols = try #require(Self.refusal(nsyms.set(UInt64(UInt32.max), in: try Binaries.bytes(Binaries.demoApp))))
        #expect(manySymbols.code == .tooMany && manySymbols.field == "nsyms" && manySymbols.offset == UInt64(nsyms.offset))

        let shnum = try Self.field(Binaries.linuxCrash, "e_shnum")
        let manySections = try #require(Self.refusal(shnum.set(0xfffe, in: try Binaries.bytes(Binaries.linuxCrash))))
        #expect(manySections.code == .tooMany && manySections.field == "e_shnum" && manySections.offset == 60)
    }

    @Test("Tables placed past the end are refused as outOfBounds, naming the field")
    func tables() throws {
        let demo = try Binaries.bytes(Binaries.demoApp)
        let stroff = try Self.field(Binaries.demoApp, "stroff")
        let strings = try #require(Self.refusal(stroff.set(stroff.pastEnd, in: demo)))
        #expect(strings.code == .outOfBounds && strings.field == "stroff")

        let trash = try Binaries.bytes(Binaries.trash)
        let slice = try Self.field(Binaries.trash, "offset of fat_arch 1")
        let outside = try #require(Self.refusal(slice.set(slice.pastEnd, in: trash)))
        #expect(outside.code == .outOfBounds && outside.field == "offset and size of fat_arch 1" && outside.offset == slice.pastEnd)

        let crash = try Binaries.bytes(Binaries.linuxCrash)
        // Section 32 is .symtab (readelf -S): moved one byte too far to fit.
        let offset = try Self.field(Binaries.linuxCrash, "sh_offset of section 32")
        let table = try #require(Self.refusal(offset.set(offset.pastEnd, in: crash)))
        #expect(table.code == .outOfBounds && table.field.hasPrefix("sh_offset and sh_size of section 32"), "\(table)")
    }

    @Test("A truncated file is refused, never read past its end")
    func truncated() throws {
        let bytes = try Binaries.bytes(Binaries.linuxCrash)
        // The section headers are at the end of the file: cutting the last byte loses them.
        let error = try #require(Self.refusal(Array(bytes.dropLast())))
        #expect(error.code == .outOfBounds || error.code == .tooMany || error.code == .truncated)
        #expect(!error.message.isEmpty)
    }

    @Test("A 32-bit slice in a fat file is skipped; a fat file of only 32-bit slices is refused")
    func thirtyTwoBitSlices() throws {
        let bytes = try Binaries.bytes(Binaries.trash)
        let first = try Self.field(Binaries.trash, "cputype of fat_arch 0")
        let second = try Self.field(Binaries.trash, "cputype of fat_arch 1")
        let oneSkipped = first.set(7, in: bytes) // CPU_TYPE_I386
        #expect(try ObjectFile.images(in: oneSkipped).map(\.arch) == ["arm64"])
        let error = try #require(Self.refusal(second.set(12, in: oneSkipped))) // CPU_TYPE_ARM
        #expect(error.code == .unsupported && error.message.contains("only 32-bit slices"))
    }
}
