import FramescopeCore

/// Text helpers the readers share for names and labels that come from a file.
extension StringProtocol {
    /// The text without leading and trailing spaces, tabs and carriage returns.
    func trimmingWhitespace() -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\r\n" }
        let text = Substring(self)
        guard let first = text.firstIndex(where: { !isSpace($0) }), let last = text.lastIndex(where: { !isSpace($0) }) else { return "" }
        return text[first...last]
    }

    /// The text with every scalar that `WireText` refuses (control, format, line and
    /// paragraph separators, private use) replaced by U+FFFD, so that a name from a file
    /// cannot move a terminal's cursor, colour its output or reverse what follows it.
    func printable() -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in self.unicodeScalars {
            scalars.append(WireText.refusedKind(of: scalar) == nil ? scalar : "\u{FFFD}")
        }
        return String(scalars)
    }

    /// `** Graphics info for pid 1 [app] **` without its stars: `Graphics info for pid 1 [app]`.
    func replacingStars() -> String {
        var text = Substring(self).trimmingWhitespace()
        while text.hasPrefix("*") { text = text.dropFirst() }
        while text.hasSuffix("*") { text = text.dropLast() }
        return String(text.trimmingWhitespace())
    }
}
