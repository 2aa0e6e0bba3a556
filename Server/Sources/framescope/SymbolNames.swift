import FramescopeCollector
import FramescopeCore
import FramescopeSymbols

/// How many names of one language an upload left mangled, and why, for its output:
/// `12 C++ names stayed mangled: no c++filt or llvm-cxxfilt on PATH`.
struct StayedMangled: Equatable, CustomStringConvertible {
    /// `C++` or `Swift`.
    var language: String
    /// Why: no tool, the tool failed, or it could not read them.
    var reason: String
    /// How many names.
    var count: Int

    var description: String {
        "\(count) \(language) name\(count == 1 ? "" : "s") stayed mangled: \(reason)"
    }

    /// Counts of one language by reason, in the order the reasons were first met.
    struct Tally {
        /// The language counted.
        let language: String
        /// The counts so far.
        private(set) var counts: [StayedMangled] = []

        init(language: String) {
            self.language = language
        }

        /// Counts `count` more names left mangled for `reason`.
        mutating func add(_ reason: String, count: Int = 1) {
            if let index = counts.firstIndex(where: { $0.reason == reason }) {
                counts[index].count += count
            } else {
                counts.append(StayedMangled(language: language, reason: reason, count: count))
            }
        }
    }
}

/// The names `framescope symbols upload` sends for an image's symbols.
///
/// A name is the symbol's base name (``Symbol/baseName``: a Mach-O `_` and a compiler's clone
/// suffix dropped) made readable by its language's demangler (Swift's `$s…`/`_T…` by
/// ``SwiftDemangler``, C++'s `_Z…` by ``CxxDemangler``; C and Objective-C as they are), then
/// one ``CloneNote`` per clone (`shop::decode(char const*, int) [clone .cold]`), so that the
/// collector groups a function's clones with it. Names are fitted to what the collector
/// takes (``SymbolUpload/maximumNameLength`` bytes, control and format characters dropped),
/// cutting the function's name, never its notes.
struct SymbolNames {
    /// Swift's demangler.
    var swift: SwiftDemangler
    /// C++'s demangler.
    var cxx: CxxDemangler

    /// The name of each of `symbols` (empty where nothing readable is left), and how many
    /// stayed mangled, by language and reason.
    func readable(_ symbols: [Symbol]) -> (names: [String], stayedMangled: [StayedMangled]) {
        let bases = symbols.map(\.baseName)
        let swiftNames = swift.demangle(bases)
        let cxxNames = cxx.demangle(swiftNames.names)
        var names: [String] = []
        names.reserveCapacity(symbols.count)
        for (symbol, base) in zip(symbols, cxxNames.names) {
            let notes = CloneNote.text(symbol.clones)
            let budget = SymbolUpload.maximumNameLength - notes.utf8.count
            guard budget > 0 else {
                names.append(WireText.sanitized(base + notes, maximumBytes: SymbolUpload.maximumNameLength, fallback: ""))
                continue
            }
            let function = WireText.sanitized(base, maximumBytes: budget, fallback: "")
            names.append(function.isEmpty ? "" : function + notes)
        }
        return (names, swiftNames.stayedMangled + cxxNames.stayedMangled)
    }
}
