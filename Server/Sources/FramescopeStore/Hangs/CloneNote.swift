/// How an uploaded symbol name shows a compiler's clone of a function, and which function
/// such a name belongs to (issue 42, item 5).
///
/// GCC and LLVM name the pieces they make of one function with suffixes: `decode.cold` (its
/// unlikely path moved away), `scaled.constprop.0` (a copy for constant arguments),
/// `usedOf.isra.0`, `checksum.part.0`, chains such as `f.isra.0.cold`. `framescope symbols
/// upload` sends such a symbol as its function's readable name followed by one note per
/// clone, as `c++filt` prints them: `shop::decode(char const*, int) [clone .cold]`. A frame's
/// `symbol` keeps the notes (where the sample was); hangs are grouped by the function, the
/// name without them, so a hang in `decode [clone .cold]` and one in `decode` are one group.
public enum CloneNote {
    /// One note per clone, each with a leading space: `[".isra.0", ".cold"]` gives
    /// ` [clone .isra.0] [clone .cold]`; empty for no clones.
    public static func text(_ clones: [String]) -> String {
        clones.map { " [clone \($0)]" }.joined()
    }

    /// The function `name` belongs to: `name` without the clone notes that end it
    /// (`shop::decode(char const*, int) [clone .isra.0] [clone .cold]` gives
    /// `shop::decode(char const*, int)`); `name` itself when none does.
    /// - Complexity: O(length of the notes).
    public static func function(of name: String) -> String {
        let opening = " [clone ."
        var end = name.endIndex
        while name[..<end].hasSuffix("]"), let start = name[..<end].range(of: opening, options: .backwards) {
            // The note's clone: a word and numbers, never a bracket or a space.
            let clone = name[start.upperBound..<name.index(before: end)]
            guard !clone.isEmpty, !clone.contains("]"), !clone.contains(" "), !clone.contains("[") else { break }
            end = start.lowerBound
        }
        return end == name.endIndex ? name : String(name[..<end])
    }
}
