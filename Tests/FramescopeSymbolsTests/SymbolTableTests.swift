import FramescopeSymbols
import Testing

@Suite("SymbolTable: lookups by offset, names and clone suffixes")
struct SymbolTableTests {
    static func symbol(_ name: String, _ offset: UInt64, _ size: UInt64, _ format: ObjectFormat = .elf) -> Symbol {
        Symbol(name: name, offset: offset, size: size, nameOffset: 0, format: format)
    }

    static let table = SymbolTable([
        symbol("c", 0x300, 0x10),
        symbol("a", 0x100, 0x100),
        symbol("b", 0x200, 0x80), // ends at 0x280: a gap up to c
        symbol("a_alias.localalias", 0x100, 0x100),
    ])

    @Test("Symbols are sorted by offset, an alias without a suffix first", arguments: [0, 1])
    func sorted(_ rotation: Int) {
        let shuffled = SymbolTable(Array(Self.table.symbols[rotation...] + Self.table.symbols[..<rotation]))
        #expect(shuffled.symbols.map(\.name) == ["a", "a_alias.localalias", "b", "c"])
        #expect(shuffled == Self.table)
    }

    @Test("A lookup finds the symbol containing the offset and the delta into it; nil before, in gaps and after",
          arguments: [
              (UInt64(0x0ff), nil, nil), (0x100, "a", 0), (0x1ff, "a", 0xff), (0x200, "b", 0), (0x27f, "b", 0x7f),
              (0x280, nil, nil), (0x2ff, nil, nil), (0x300, "c", 0), (0x30f, "c", 0xf), (0x310, nil, nil), (.max, nil, nil),
          ] as [(UInt64, String?, UInt64?)])
    func lookup(_ offset: UInt64, _ name: String?, _ delta: UInt64?) {
        let found = Self.table.lookup(offset)
        #expect(found?.symbol.name == name)
        #expect(found?.delta == delta)
    }

    @Test("A return address is looked up one byte earlier, its delta measured from itself")
    func returnAddress() {
        // A call that ends a (non-returning) function returns to the next one's first byte.
        #expect(Self.table.lookup(0x200)?.symbol.name == "b")
        let caller = Self.table.lookup(0x200, isReturnAddress: true)
        #expect(caller?.symbol.name == "a" && caller?.delta == 0x100)
        #expect(Self.table.lookup(0, isReturnAddress: true) == nil)
        #expect(SymbolTable([]).lookup(0x100) == nil)
    }

    @Test("A symbol whose end would overflow ends at UInt64.max")
    func overflow() {
        let table = SymbolTable([Self.symbol("top", .max - 1, 10)])
        #expect(table.symbols[0].end == .max)
        #expect(table.lookup(.max - 1)?.symbol.name == "top")
        #expect(table.lookup(.max) == nil)
    }

    @Test("Mach-O names lose one leading underscore; ELF names and Objective-C methods keep theirs")
    func strippedNames() {
        #expect(Self.symbol("_main", 0, 1, .machO).strippedName == "main")
        #expect(Self.symbol("__ZN3foo3barEv", 0, 1, .machO).strippedName == "_ZN3foo3barEv")
        #expect(Self.symbol("_$s5trashAA5pathsySaySSG_tFTf4d_n", 0, 1, .machO).strippedName == "$s5trashAA5pathsySaySSG_tFTf4d_n")
        #expect(Self.symbol("-[A b]", 0, 1, .machO).strippedName == "-[A b]")
        #expect(Self.symbol("_ZN3foo3barEv", 0, 1, .elf).strippedName == "_ZN3foo3barEv")
    }

    @Test("GCC and LLVM clone suffixes are separated from the base name", arguments: [
        ("f.constprop.55", "f", ".constprop.55"),
        ("_ZNK15google_breakpad11LinuxDumper26HandleDeletedFileInMappingEPc.part.12.constprop.56",
         "_ZNK15google_breakpad11LinuxDumper26HandleDeletedFileInMappingEPc", ".part.12.constprop.56"),
        ("g.isra.0", "g", ".isra.0"), ("h.cold", "h", ".cold"), ("h.isra.0.cold", "h", ".isra.0.cold"),
        ("k.localalias", "k", ".localalias"), ("k.localalias.19", "k", ".localalias.19"), ("m.lto_priv.0", "m", ".lto_priv.0"),
        ("n.llvm.1234567", "n", ".llvm.1234567"), ("p.specialized.1", "p", ".specialized.1"),
        ("_ZL1qv.__uniq.179643841", "_ZL1qv", ".__uniq.179643841"),
        // Not clone suffixes: a file name, a bare number, a leading dot, an empty component.
        ("_GLOBAL__sub_I_main.cpp", "_GLOBAL__sub_I_main.cpp", nil), ("x.1", "x.1", nil), (".cold", ".cold", nil),
        ("y.part.", "y.part.", nil), ("z.cold.x", "z.cold.x", nil), ("plain", "plain", nil),
    ] as [(String, String, String?)])
    func suffixes(_ name: String, _ base: String, _ suffix: String?) {
        let symbol = Self.symbol(name, 0, 1)
        #expect(symbol.baseName == base)
        #expect(symbol.suffix == suffix)
    }

    @Test("A suffix splits into its clones, each a word and the numbers after it", arguments: [
        ("f.constprop.55", [".constprop.55"]), ("h.isra.0.cold", [".isra.0", ".cold"]),
        ("g.part.12.constprop.56", [".part.12", ".constprop.56"]), ("k.localalias", [".localalias"]),
        ("m.cold.1", [".cold.1"]), ("n.lto_priv.0.lto_priv.1", [".lto_priv.0", ".lto_priv.1"]), ("plain", []), ("x.1", []),
    ] as [(String, [String])])
    func clones(_ name: String, _ clones: [String]) {
        let symbol = Self.symbol(name, 0, 1)
        #expect(symbol.clones == clones)
        #expect(symbol.baseName + clones.joined() == symbol.strippedName)
    }

    #if os(Linux)
    @Test("A program compiled here with g++ -O2: its .constprop, .isra, .part and .cold clones have the base names of their functions")
    func compiledClones() throws {
        let program = try CompiledELF()
        let image = try #require(try ObjectFile.images(in: try program.bytes()).first)
        let cloned = image.symbols.symbols.filter { $0.suffix != nil }
        // The words GCC 12 uses; the numbers after them are the compiler's to choose.
        #expect(Set(cloned.flatMap(\.clones).map { $0.split(separator: ".").first.map(String.init) ?? "" })
                    == ["constprop", "isra", "part", "cold"])
        let bases = Set(cloned.map(\.baseName))
        #expect(bases == ["_ZN4shopL6scaledEii", "_ZN4shopL6usedOfEPKNS_3BigE", "_ZN4shopL8checksumEPKci", "_ZN4shop6decodeEPKci"])
        // decode and decode.cold: two symbols, far apart, of one function.
        let decode = image.symbols.symbols.filter { $0.baseName == "_ZN4shop6decodeEPKci" }
        #expect(decode.map(\.clones).sorted { $0.count < $1.count } == [[], [".cold"]])
    }
    #endif

    @Test("A Mach-O name's base drops the underscore and the suffix")
    func machOBase() {
        let symbol = Self.symbol("__Z1fv.cold.1", 0, 1, .machO)
        #expect(symbol.baseName == "_Z1fv" && symbol.suffix == ".cold.1")
    }
}
