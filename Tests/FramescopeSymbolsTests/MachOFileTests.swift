import FramescopeSymbols
import Testing

/// The Mach-O files of `../shared/binaries`, against facts checked with LLVM 14's tools.
///
/// Symbol counts "in `__text`" were checked with `llvm-nm -m --arch=A FILE` (entries shown
/// as `(__TEXT,__text)`) filtered to addresses inside `__text`'s `addr`..`addr+size` from
/// `llvm-objdump --section-headers --arch=A FILE`: llvm-nm also lists `__mh_execute_header`
/// under `__text` (its `n_sect` is 1) although it lies before the section, which is why
/// llvm-nm alone says one more for executables (41 for trash arm64) than the reader keeps.
@Suite("Mach-O files: slices, UUIDs, the symbols in code sections")
struct MachOFileTests {
    @Test("trash: a fat executable with x86_64 at 16384 and arm64 at 114688, their UUIDs and symbols")
    func trash() throws {
        let images = try Binaries.images(Binaries.trash)
        #expect(images.map(\.arch) == ["x86_64", "arm64"])
        #expect(images.map(\.fileOffset) == [16384, 114_688])
        #expect(images.map(\.id) == ["6b75a536223a3d189a8abdfe59255a0c", "73d406b3246a378bbefc16429a4d8133"])
        #expect(images.allSatisfy { $0.format == .machO && $0.kind == .executable && $0.typeName == "MH_EXECUTE" && $0.debugLink == nil })
        // llvm-nm/llvm-objdump, as in the suite's summary: x86_64 120, arm64 40 in __text.
        #expect(images.map(\.symbols.count) == [120, 40])

        let arm64 = images[1]
        let paths = try #require(arm64.symbols.lookup(0x215c))
        #expect(paths.symbol.name == "_$s5trashAA5pathsySaySSG_tFTf4d_n")
        #expect(paths.symbol.strippedName == "$s5trashAA5pathsySaySSG_tFTf4d_n")
        #expect(paths.delta == 0)
        #expect(arm64.symbols.lookup(0x25b8)?.symbol.name == "_$sSo12NSFileHandleC5trashE5writeyySSF")
        // __text is 0x100001ac4 + 0x1bc4 and __TEXT's vmaddr 0x100000000: the first symbol
        // starts at 0x1ac4, the last ends at the section's end, 0x3688.
        #expect(arm64.symbols.symbols.first?.offset == 0x1ac4)
        #expect(arm64.symbols.symbols.last?.end == 0x3688)
        #expect(arm64.symbols.lookup(0x3688) == nil)
        #expect(arm64.symbols.lookup(0x1ac3) == nil)
    }

    @Test("A slice cut out of a fat file reads as a thin file: the same identity and symbols, names 114688 bytes earlier")
    func thinSlice() throws {
        let bytes = try Binaries.bytes(Binaries.trash)
        let size = try #require(FieldMap.read(bytes, 8 + 20 + 12, 4, bigEndian: true))
        let thin = Array(bytes[114_688..<114_688 + Int(size)])
        let images = try ObjectFile.images(in: thin)
        let fat = try #require(try ObjectFile.images(in: bytes).last)
        #expect(images.count == 1)
        let image = try #require(images.first)
        #expect(image.id == fat.id && image.arch == "arm64" && image.fileOffset == 0 && image.extent == fat.extent)
        #expect(image.symbols.symbols.map(\.name) == fat.symbols.symbols.map(\.name))
        #expect(image.symbols.symbols.map(\.offset) == fat.symbols.symbols.map(\.offset))
        #expect(image.symbols.symbols.map { $0.nameOffset + 114_688 } == fat.symbols.symbols.map(\.nameOffset))
    }

    @Test("A 64-bit fat header (0xCAFEBABF, 32-byte entries) gives the same slices")
    func fat64() throws {
        let bytes = try Binaries.bytes(Binaries.trash)
        var wide = bytes
        // The 0xCAFEBABE header and its 2 entries of 20 bytes rewritten as 0xCAFEBABF with
        // 2 entries of 32 (cputype, cpusubtype, offset and size as UInt64, align, reserved);
        // the first slice starts at 16384, far after both.
        for index in 0..<80 { wide[index] = 0 }
        wide = Field(name: "magic", offset: 0, width: 4, bigEndian: true, pastEnd: 0).set(0xCAFE_BABF, in: wide)
        wide = Field(name: "nfat_arch", offset: 4, width: 4, bigEndian: true, pastEnd: 0).set(2, in: wide)
        for slice in 0..<2 {
            let narrow = 8 + slice * 20, broad = 8 + slice * 32
            for (from, to, width) in [(0, 0, 4), (4, 4, 4), (8, 8, 8), (12, 16, 8), (16, 24, 4)] {
                let value = try #require(FieldMap.read(bytes, narrow + from, 4, bigEndian: true))
                wide = Field(name: "fat_arch_64", offset: broad + to, width: width, bigEndian: true, pastEnd: 0).set(value, in: wide)
            }
        }
        let images = try ObjectFile.images(in: wide)
        #expect(images.map(\.id) == ["6b75a536223a3d189a8abdfe59255a0c", "73d406b3246a378bbefc16429a4d8133"])
        #expect(images.map(\.fileOffset) == [16384, 114_688])
        #expect(images.map(\.symbols.count) == [120, 40])
    }

    @Test("get-windows: fat, x86_64 at 4096 and arm64 at 81920; arm64 lookups of two Swift functions")
    func getWindows() throws {
        let images = try Binaries.images(Binaries.getWindows)
        #expect(images.map(\.arch) == ["x86_64", "arm64"])
        #expect(images.map(\.fileOffset) == [4096, 81920])
        #expect(images.map(\.id) == ["9ebd852a690335e3aea300bbf8e29de7", "5307fcdea6d530a49cb4e32df2420ec6"])
        #expect(images.map(\.symbols.count) == [118, 97])
        let arm64 = images[1]
        #expect(arm64.symbols.lookup(0x2e08)?.symbol.name == "_$s13GetWindowsCLI20getWindowInformation6window0G8OwnerPIDSDySSypGSgAE_s5Int32VtF")
        let permission = try #require(arm64.symbols.lookup(0x5140))
        #expect(permission.symbol.name == "_$s13GetWindowsCLI28hasScreenRecordingPermissionSbyF")
        #expect(permission.symbol.offset == 0x5138)
        #expect(permission.delta == 8)
    }

    @Test("TestProgram.dSYM: a thin arm64 MH_DSYM with 14 symbols in __text and the known functions")
    func testProgram() throws {
        let images = try Binaries.images(Binaries.testProgram)
        #expect(images.count == 1)
        let image = try #require(images.first)
        #expect(image.id == "09d134c501914af49e197ca87ab0181c")
        #expect(image.arch == "arm64")
        #expect(image.kind == .debugSymbols && image.typeName == "MH_DSYM")
        #expect(image.fileOffset == 0)
        #expect(image.symbols.count == 14)
        let expected: [(UInt64, String)] = [
            (0xae0, "_$s11TestProgram5greet4nameS2S_tF"),
            (0xc90, "_$s11TestProgram9calculate1a1bS2i_SitF"),
            (0xd28, "_$s11TestProgram5outeryyF"),
            (0xf20, "_$s11TestProgram5outeryyF5innerL_5valueS2i_tF"),
            (0xf98, "_$s11TestProgram9inlineAddyS2i_SitF"),
        ]
        for (offset, name) in expected {
            #expect(image.symbols.lookup(offset)?.symbol.name == name, "0x\(String(offset, radix: 16))")
        }
        // 0xb00 lies inside greet (0xae0..<0xbf8), 0x20 bytes in.
        let inGreet = try #require(image.symbols.lookup(0xb00))
        #expect(inGreet.symbol.offset == 0xae0 && inGreet.delta == 0x20)
        // The last symbol, _$sSa12_endMutationyyF at 0x1010, runs to __text's end, 0x101c.
        let last = try #require(image.symbols.symbols.last)
        #expect(last.offset == 0x1010 && last.size == 0xc)
    }

    @Test("symbolic's crash and crash.dSYM share a UUID, 194 symbols and ReadImageInfo at 0x2210")
    func macCrash() throws {
        let binary = try #require(try Binaries.images(Binaries.macCrash).first)
        let dsym = try #require(try Binaries.images(Binaries.macCrashDSYM).first)
        #expect(binary.id == "67e9247c814e392ba027dbde6748fcbf")
        #expect(dsym.id == binary.id)
        #expect(binary.kind == .executable && dsym.kind == .debugSymbols)
        #expect(binary.arch == "x86_64" && dsym.arch == "x86_64")
        #expect(binary.symbols.count == 194 && dsym.symbols.count == 194)
        for image in [binary, dsym] {
            let found = try #require(image.symbols.lookup(0x2210))
            #expect(found.symbol.name == "__ZN15google_breakpad13ReadImageInfoINS_7MachO64EEEvRNS_13DynamicImagesEy")
            #expect(found.symbol.strippedName == "_ZN15google_breakpad13ReadImageInfoINS_7MachO64EEEvRNS_13DynamicImagesEy")
            // It runs to the next symbol, ReadImageInfo<MachO32> at 0x27e0.
            #expect(found.symbol.size == 0x27e0 - 0x2210)
        }
    }

    @Test("Example.framework.dSYM: a fat dSYM whose slices hold data symbols only, so no lookup finds a function")
    func example() throws {
        let images = try Binaries.images(Binaries.example)
        #expect(images.map(\.arch) == ["x86_64", "arm64"])
        #expect(images.map(\.fileOffset) == [64, 9696])
        #expect(images.map(\.id) == ["3b4566e4491b3dcf94f5ae51f624dd87", "2556f1515a403847be6ce2c1b5be4df8"])
        #expect(images.allSatisfy { $0.kind == .debugSymbols && $0.symbols.isEmpty })
        // _ExampleVersionString and _ExampleVersionNumber are in __TEXT,__const at 0x3fd0, 0x3ff8.
        for image in images {
            #expect(image.symbols.lookup(0x3fd0) == nil && image.symbols.lookup(0x3ff8) == nil)
        }
    }

    @Test("CrashProbe's dSYMs: the crashing PC in CrashLibiOS and two return addresses in CrashProbeiOS")
    func crashProbe() throws {
        let library = try #require(try Binaries.images(Binaries.crashLib).first)
        #expect(library.id == "3cd3e3cc281e3af384ebcde6d56f0559")
        #expect(library.arch == "arm64" && library.kind == .debugSymbols)
        #expect(library.symbols.count == 5335)
        // Its __TEXT vmaddr is 0: offsets are addresses.
        let crash = try #require(library.symbols.lookup(0x9280))
        #expect(crash.symbol.name == "__TToFC11CrashLibiOS13CRLCrashSwift5crashfT_T_")
        #expect(crash.symbol.strippedName == "_TToFC11CrashLibiOS13CRLCrashSwift5crashfT_T_")
        #expect(crash.symbol.size == 4)

        let app = try #require(try Binaries.images(Binaries.crashProbe).first)
        #expect(app.id == "54039061a9833323a49d837a894d667f")
        #expect(app.symbols.count == 131)
        // 0x9988 is a return address: looked up at 0x9987, inside doCrash (0x9958..<0x999c).
        let doCrash = try #require(app.symbols.lookup(0x9988, isReturnAddress: true))
        #expect(doCrash.symbol.name == "-[CRLDetailViewController doCrash]")
        #expect(doCrash.symbol.strippedName == "-[CRLDetailViewController doCrash]")
        #expect(doCrash.delta == 0x9988 - 0x9958)
        #expect(app.symbols.lookup(0x9987)?.symbol.name == "-[CRLDetailViewController doCrash]")
        #expect(app.symbols.lookup(0x79b0)?.symbol.name == "_main")

        let sentry = try #require(try Binaries.images(Binaries.sentrySwift).first)
        #expect(sentry.id == "0285884d3de93051b23a63b48bf99f35")
        #expect(sentry.symbols.count == 1689)
    }

    @Test("Swift 3 names (__T…) in __text: SentrySwift 1,577, CrashLibiOS 12, CrashProbeiOS 14")
    func swift3Names() throws {
        // `llvm-nm -m FILE | grep '(__TEXT,__text)' | awk '{print $NF}' | grep -c '^__T'`.
        // (SOURCES.md's 18 and 23 count every nlist entry, not only those in __text.)
        for (path, expected) in [(Binaries.sentrySwift, 1577), (Binaries.crashLib, 12), (Binaries.crashProbe, 14)] {
            let image = try #require(try Binaries.images(path).first)
            #expect(image.symbols.symbols.filter { $0.name.hasPrefix("__T") }.count == expected, "\(path)")
        }
    }

    @Test("DemoApp: a stripped app whose only defined symbol, __mh_execute_header, lies outside __text: no symbol")
    func demoApp() throws {
        let images = try Binaries.images(Binaries.demoApp)
        #expect(images.count == 1)
        let image = try #require(images.first)
        #expect(image.id == "1223a28e823d3a97bde79fa26b7999a2")
        #expect(image.arch == "arm64" && image.kind == .executable)
        #expect(image.symbols.isEmpty)
        // __text starts at 0x100004000; __mh_execute_header is at 0x100000000 (offset 0).
        #expect(image.symbols.lookup(0) == nil && image.symbols.lookup(0x4000) == nil)
    }

    @Test("Every Mach-O symbol lies in a code section, sorted, with the size to the next start or the section's end")
    func sizes() throws {
        for path in [Binaries.trash, Binaries.getWindows, Binaries.testProgram, Binaries.crashLib] {
            for image in try Binaries.images(path) {
                let symbols = image.symbols.symbols
                for (symbol, next) in zip(symbols, symbols.dropFirst()) {
                    #expect(symbol.offset <= next.offset)
                    if symbol.offset < next.offset { #expect(symbol.end <= next.offset, "\(symbol.name)") }
                    #expect(symbol.size > 0, "\(symbol.name)")
                    #expect(image.symbols.lookup(symbol.offset)?.symbol.offset == symbol.offset)
                    #expect(symbol.end <= image.extent, "\(symbol.name)")
                }
            }
        }
    }
}
