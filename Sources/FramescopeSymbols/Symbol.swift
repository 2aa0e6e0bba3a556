/// One function symbol of an image: its raw name and the bytes it covers.
///
/// Offsets are in the image's own address space, so that a frame's offset (runtime address
/// minus where the image was loaded) can be looked up directly: for Mach-O the symbol's
/// address minus the `__TEXT` segment's `vmaddr`; for ELF the symbol's virtual address in the
/// file (`st_value`), which equals the runtime address minus the load bias.
public struct Symbol: Hashable, Sendable {
    /// The name as the file spells it, still mangled (`_$s5trash…`, `_ZN…`,
    /// `-[CRLDetailViewController doCrash]`), with a Mach-O file's leading `_` kept.
    public var name: String
    /// Where the symbol starts, in bytes from the image's base (see the type's summary).
    public var offset: UInt64
    /// How many bytes it covers: from ``offset`` to the first of the end its format declares
    /// (ELF's `st_size`, when not 0), the next symbol's start in its section, and its
    /// section's end. Both readers apply this one rule, so no symbol reaches into another
    /// section (ELF's `_init`, size 0, stops at the end of `.init`, before `.plt`).
    public var size: UInt64
    /// The file offset (from the start of the file, fat header included) of the name's
    /// first byte, so that a name can be traced back to the bytes it came from.
    public var nameOffset: UInt64
    /// The container format, which decides ``strippedName``.
    public var format: ObjectFormat

    /// A symbol named `name` at `offset` covering `size` bytes, its name read at file
    /// offset `nameOffset`.
    public init(name: String, offset: UInt64, size: UInt64, nameOffset: UInt64, format: ObjectFormat) {
        self.name = name
        self.offset = offset
        self.size = size
        self.nameOffset = nameOffset
        self.format = format
    }

    /// One past the symbol's last byte (saturating at `UInt64.max`).
    public var end: UInt64 {
        let (sum, overflow) = offset.addingReportingOverflow(size)
        return overflow ? .max : sum
    }

    /// Whether `offset` lies inside the symbol.
    public func contains(_ offset: UInt64) -> Bool {
        offset >= self.offset && offset < end
    }

    /// The name as the language spells it: a Mach-O file's C-level names carry one extra
    /// leading `_` (`_main`, `_$s…`, `__ZN…`, `__T…`), removed here; ELF names and
    /// Objective-C methods (`-[A b]`) are returned unchanged.
    public var strippedName: String {
        guard format == .machO, name.utf8.first == UInt8(ascii: "_") else { return name }
        return String(name.dropFirst())
    }

    /// ``strippedName`` without a compiler's clone suffix (``suffix``), the part a
    /// demangler reads.
    public var baseName: String {
        let stripped = strippedName
        guard let start = Self.suffixStart(stripped) else { return stripped }
        return String(stripped[..<start])
    }

    /// The clone suffix GCC or LLVM appended to a function it specialised or split
    /// (`.constprop.55`, `.part.0`, `.isra.0`, `.cold`, `.localalias`, `.lto_priv.0`,
    /// `.clone.3`, `.llvm.123`, `.specialized.1`, `.__uniq.123`, and chains such as
    /// `.isra.0.cold`), with its leading dot; nil when there is none.
    ///
    /// Each part of it is still the function of ``baseName``'s source: hangs in
    /// `decode.cold` and in `decode` are hangs in one function.
    public var suffix: String? {
        let stripped = strippedName
        return Self.suffixStart(stripped).map { String(stripped[$0...]) }
    }

    /// ``suffix`` split into its clones, each a word and the numbers after it, in the order
    /// the compiler applied them: `.isra.0.cold` is `[".isra.0", ".cold"]`,
    /// `.part.12.constprop.56` is `[".part.12", ".constprop.56"]`; empty without a suffix.
    /// (This is how `c++filt` prints them: `f(int) [clone .isra.0] [clone .cold]`.)
    public var clones: [String] {
        guard let suffix else { return [] }
        var clones: [String] = []
        for component in suffix.dropFirst().split(separator: ".", omittingEmptySubsequences: false) {
            if Self.suffixWords.contains(component) || clones.isEmpty {
                clones.append("." + component)
            } else {
                clones[clones.count - 1] += "." + component
            }
        }
        return clones
    }

    /// The words that begin a clone suffix: GCC's `constprop`, `part`, `isra`, `cold`,
    /// `localalias`, `lto_priv` and `clone`; LLVM's `llvm` (ThinLTO's promoted locals),
    /// `cold` (hot/cold splitting), `specialized` (function specialisation) and `__uniq`
    /// (`-funique-internal-linkage-names`).
    static let suffixWords: Set<Substring> = ["constprop", "part", "isra", "cold", "localalias", "lto_priv", "clone", "llvm",
                                              "specialized", "__uniq"]

    /// The index of the first `.` after which every dot-separated component is a suffix word
    /// or a decimal number, the first being a word; nil when there is none.
    static func suffixStart(_ name: String) -> String.Index? {
        var search = name.startIndex
        while let dot = name[search...].firstIndex(of: ".") {
            let components = name[name.index(after: dot)...].split(separator: ".", omittingEmptySubsequences: false)
            if dot != name.startIndex, let first = components.first, suffixWords.contains(first),
               components.allSatisfy({ suffixWords.contains($0) || (!$0.isEmpty && $0.allSatisfy(\.isASCIIDigit)) }) {
                return dot
            }
            search = name.index(after: dot)
        }
        return nil
    }
}

extension Character {
    /// Whether the character is one of `0`…`9`.
    fileprivate var isASCIIDigit: Bool {
        guard let ascii = asciiValue else { return false }
        return ascii >= UInt8(ascii: "0") && ascii <= UInt8(ascii: "9")
    }
}
