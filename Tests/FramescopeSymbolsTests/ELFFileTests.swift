import Foundation
import FramescopeSymbols
import Testing

/// The ELF files of `../shared/binaries` against facts checked with `readelf` (binutils),
/// and the test binary itself.
///
/// "Defined FUNC" counts: `readelf -s -W FILE`, the rows after the `.symtab` heading whose
/// type is `FUNC` or `IFUNC` and whose `Ndx` is not `UND`.
@Suite("ELF files: build ids, debug links, defined function symbols")
struct ELFFileTests {
    @Test("symbolic's linux crash: ET_EXEC x86_64, its build id, 186 functions, two lookups and a debug link")
    func linuxCrash() throws {
        let images = try Binaries.images(Binaries.linuxCrash)
        #expect(images.count == 1)
        let image = try #require(images.first)
        #expect(image.id == "f1c3bcc0279865fe3058404b2831d9e64135386c")
        #expect(image.format == .elf && image.arch == "x86_64")
        #expect(image.kind == .executable && image.typeName == "ET_EXEC")
        #expect(image.debugLink == "crash.debug")
        #expect(image.symbols.count == 186)
        // The second PT_LOAD: p_vaddr 0x619c88 + p_memsz 0xff0.
        #expect(image.extent == 0x61ac78)

        let callback = try #require(image.symbols.lookup(0x401ec0 + 0x3a))
        #expect(callback.symbol.name == "_ZN12_GLOBAL__N_18callbackERKN15google_breakpad18MinidumpDescriptorEPvb")
        #expect(callback.symbol.offset == 0x401ec0 && callback.symbol.size == 0x3b && callback.delta == 0x3a)
        #expect(callback.symbol.strippedName == callback.symbol.name) // ELF names keep their underscore
        #expect(image.symbols.lookup(0x401ec0 + 0x3b)?.symbol.name != callback.symbol.name)

        let soName = try #require(image.symbols.lookup(0x4085e0))
        #expect(soName.symbol.name == "_ZN15google_breakpad12_GLOBAL__N_113ElfFileSoNameERKNS_11LinuxDumperERKNS_11MappingInfoEPcm.constprop.55")
        #expect(soName.symbol.baseName == "_ZN15google_breakpad12_GLOBAL__N_113ElfFileSoNameERKNS_11LinuxDumperERKNS_11MappingInfoEPcm")
        #expect(soName.symbol.suffix == ".constprop.55")
        #expect(soName.symbol.size == 395)

        // readelf: 15 of the 186 carry a GCC clone suffix (.constprop, .part, .isra, .localalias).
        #expect(image.symbols.symbols.filter { $0.suffix != nil }.count == 15)
        // deregister_tm_clones has st_size 0: it runs to register_tm_clones at 0x401e30.
        let deregister = try #require(image.symbols.symbols.first { $0.name == "deregister_tm_clones" })
        #expect(deregister.offset == 0x401df0 && deregister.size == 0x40)
    }

    @Test("crash.debug: the same build id and functions, and no debug link of its own")
    func linuxCrashDebug() throws {
        let binary = try #require(try Binaries.images(Binaries.linuxCrash).first)
        let debug = try #require(try Binaries.images(Binaries.linuxCrashDebug).first)
        #expect(debug.id == binary.id)
        #expect(debug.kind == .executable)
        #expect(debug.debugLink == nil)
        // Its .dynsym is SHT_NOBITS; its .symtab has 413 entries, 186 of them defined FUNC.
        #expect(debug.symbols.count == 186)
        #expect(debug.symbols.symbols.map(\.name) == binary.symbols.symbols.map(\.name))
        #expect(debug.symbols.symbols.map(\.offset) == binary.symbols.symbols.map(\.offset))
        #expect(debug.extent == binary.extent)
    }

    @Test("dyn_aarch64: ET_DYN aarch64, its build id, main at 0x554; the .debug companion agrees")
    func dynAarch64() throws {
        for path in [Binaries.dynAarch64, Binaries.dynAarch64Debug] {
            let image = try #require(try Binaries.images(path).first)
            #expect(image.id == "90aef8b4a3cd45d758501e49d1d9844736c872cd", "\(path)")
            #expect(image.arch == "aarch64" && image.kind == .sharedLibrary && image.typeName == "ET_DYN")
            #expect(image.symbols.count == 8)
            #expect(image.extent == 0x10e30 + 0x1f0)
            let main = try #require(image.symbols.lookup(0x554 + 7))
            #expect(main.symbol.name == "main" && main.symbol.offset == 0x554 && main.symbol.size == 8 && main.delta == 7)
        }
    }

    @Test("ET_EXEC against ET_DYN: executable and shared library")
    func kinds() throws {
        #expect(try Binaries.images(Binaries.linuxCrash).map(\.kind) == [.executable])
        #expect(try Binaries.images(Binaries.dynAarch64).map(\.kind) == [.sharedLibrary])
    }

    /// `image` with its symbols' names and offsets, for comparing two readings.
    static func summary(_ image: SymbolImage) -> [String] {
        image.symbols.symbols.map { "\($0.name) \($0.offset) \($0.size)" }
    }

    @Test("Extended numbering (e_shnum 0, e_shstrndx and e_phnum 0xffff, counts in section 0) reads the same image")
    func extendedNumbering() throws {
        let bytes = try Binaries.bytes(Binaries.linuxCrash)
        let original = try #require(try ObjectFile.images(in: bytes).first)
        // Section 0 (at e_shoff) gets the count (34) in sh_size, the name table's
        // index (31) in sh_link and the program header count (9) in sh_info.
        let shoff = try #require(FieldMap.read(bytes, 40, 8))
        var extended = bytes
        extended = Field(name: "e_shnum", offset: 60, width: 2, pastEnd: 0).set(0, in: extended)
        extended = Field(name: "e_shstrndx", offset: 62, width: 2, pastEnd: 0).set(0xffff, in: extended)
        extended = Field(name: "e_phnum", offset: 56, width: 2, pastEnd: 0).set(0xffff, in: extended)
        extended = Field(name: "sh_size", offset: Int(shoff) + 32, width: 8, pastEnd: 0).set(34, in: extended)
        extended = Field(name: "sh_link", offset: Int(shoff) + 40, width: 4, pastEnd: 0).set(31, in: extended)
        extended = Field(name: "sh_info", offset: Int(shoff) + 44, width: 4, pastEnd: 0).set(9, in: extended)
        let image = try #require(try ObjectFile.images(in: extended).first)
        #expect(image.id == original.id && image.debugLink == "crash.debug" && image.extent == original.extent)
        #expect(Self.summary(image) == Self.summary(original))
        guard case let .elf(file) = try ObjectFile(extended) else { Issue.record("not ELF"); return }
        #expect(file.sections.count == 34 && file.segments.count == 9)
        #expect(file.sections[31].name == ".shstrtab")
    }

    @Test("Without .symtab the symbols come from .dynsym: dyn_aarch64's main")
    func dynamicSymbols() throws {
        var bytes = try Binaries.bytes(Binaries.dynAarch64)
        // Section 27 is .symtab (readelf -S); as SHT_PROGBITS it is no symbol table.
        let shoff = try #require(FieldMap.read(bytes, 40, 8))
        bytes = Field(name: "sh_type", offset: Int(shoff) + 27 * 64 + 4, width: 4, pastEnd: 0).set(1, in: bytes)
        let image = try #require(try ObjectFile.images(in: bytes).first)
        #expect(Self.summary(image) == ["main \(0x554) 8"])
    }

    @Test("Without section headers the build id comes from the PT_NOTE segment")
    func buildIDFromSegment() throws {
        var bytes = try Binaries.bytes(Binaries.linuxCrash)
        bytes = Field(name: "e_shoff", offset: 40, width: 8, pastEnd: 0).set(0, in: bytes)
        bytes = Field(name: "e_shnum", offset: 60, width: 2, pastEnd: 0).set(0, in: bytes)
        let image = try #require(try ObjectFile.images(in: bytes).first)
        #expect(image.id == "f1c3bcc0279865fe3058404b2831d9e64135386c")
        #expect(image.symbols.isEmpty && image.debugLink == nil)
        #expect(image.extent == 0x61ac78)
    }

    #if os(Linux)
    /// readelf (binutils) is installed by scripts/test; missing, this fails rather than skips.
    @Test("The test binary: its build id is readelf's, and the runtime address of a marker function finds it")
    func selfExecutable() throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/readelf"), "install binutils: readelf is the peer this test checks against")
        let path = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let image = try #require(try ObjectFile.images(in: bytes).first)

        let readelf = Process()
        readelf.executableURL = URL(fileURLWithPath: "/usr/bin/readelf")
        readelf.arguments = ["-n", path]
        let pipe = Pipe()
        readelf.standardOutput = pipe
        try readelf.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        readelf.waitUntilExit()
        let line = try #require(output.split(separator: "\n").first { $0.contains("Build ID:") })
        let expected = line.split(separator: " ").last.map(String.init)
        #expect(image.id != nil && image.id == expected)

        // The marker's runtime address minus the load bias is its offset: the bias is where
        // the mapping of the file's offset 0 starts (/proc/self/maps) minus the first
        // PT_LOAD's page (0 in a position-independent executable).
        guard case let .elf(file) = try ObjectFile(bytes) else { Issue.record("not ELF"); return }
        let load = try #require(file.segments.first { $0.type == 1 })
        let firstLoad = load.address & ~0xfff
        let maps = try String(contentsOfFile: "/proc/self/maps", encoding: .utf8)
        var start: UInt64?
        for line in maps.split(separator: "\n") {
            let columns = line.split(separator: " ", omittingEmptySubsequences: true)
            guard columns.count >= 6, columns[5] == path, columns[2] == "00000000" else { continue }
            start = columns[0].split(separator: "-").first.flatMap { UInt64($0, radix: 16) }
            break
        }
        let mapped = try #require(start)
        let bias = mapped - firstLoad
        let address = UInt64(unsafeBitCast(framescopeSymbolsTestMarker as @convention(c) () -> Int32, to: UInt.self))
        let found = try #require(image.symbols.lookup(UInt64(address - bias)))
        #expect(found.symbol.name == "framescope_symbols_test_marker")
        #expect(found.delta == 0)
        #expect(framescopeSymbolsTestMarker() == 33)
        // Swift functions are there under their mangled names (this test's name is one
        // length-prefixed word: `…14selfExecutable…`).
        #expect(image.symbols.symbols.contains { $0.name.hasPrefix("$s22FramescopeSymbolsTests") && $0.name.contains("14selfExecutable") })
    }
    #endif
}

/// A C-callable function the test binary's symbol table names `framescope_symbols_test_marker`.
@_cdecl("framescope_symbols_test_marker")
func framescopeSymbolsTestMarker() -> Int32 { 33 }
