import Foundation

/// Text from a device or a URL in the one form the collector stores and compares it in:
/// Unicode Normalization Form C (canonical composition), compared as bytes.
///
/// Swift's `String` compares and hashes by canonical equivalence (`"Caf\u{e9}"` equals
/// `"Cafe\u{301}"`), while SQLite and ClickHouse compare bytes. A map keyed by `String`
/// next to a store keyed by bytes merges what the store keeps apart, and counts a visit in
/// one spelling's running total while writing it under the other. So every device string
/// that becomes a key (screen, app version and build, device model, OS name and version,
/// tag keys and values) and every filter value a reader types is put into NFC once, where
/// it enters (``IngestValidator``, the read routes' parameters), before it is checked,
/// limited or stored; and maps that mirror stored keys compare bytes (``StoredText``,
/// ``RollupKey``), so that what the store keeps apart stays apart in memory too.
public enum CanonicalText {
    /// `text` in Normalization Form C.
    ///
    /// Text whose scalars are all below U+0300 is already in NFC (no scalar below the
    /// combining diacritical marks composes or decomposes in NFC) and is returned as it is,
    /// without a call into Foundation: that is every ASCII name and most Latin ones.
    public static func nfc(_ text: String) -> String {
        if text.utf8.allSatisfy({ $0 < 0xCC }) {
            // UTF-8 lead bytes below 0xCC encode scalars below U+0300.
            return text
        }
        return text.precomposedStringWithCanonicalMapping
    }

    /// Whether `text` is already in Normalization Form C, byte for byte.
    public static func isNFC(_ text: String) -> Bool {
        nfc(text).utf8.elementsEqual(text.utf8)
    }
}

/// A string that is equal to another only when their UTF-8 bytes are, and hashes its
/// bytes: the key of an in-memory map that mirrors what a store compares as bytes.
///
/// `String`'s own equality is canonical equivalence; two stored values that differ in
/// their bytes but not canonically would share one entry of a `Set<String>`.
public struct StoredText: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The text.
    public var text: String

    /// Wraps `text` as it is (callers normalise first where the value comes from outside).
    public init(_ text: String) {
        self.text = text
    }

    /// Byte equality.
    public static func == (lhs: StoredText, rhs: StoredText) -> Bool {
        lhs.text.utf8.elementsEqual(rhs.text.utf8)
    }

    /// Byte order, as SQLite's default `BINARY` collation orders text.
    public static func < (lhs: StoredText, rhs: StoredText) -> Bool {
        lhs.text.utf8.lexicographicallyPrecedes(rhs.text.utf8)
    }

    /// Hashes the bytes and their count.
    public func hash(into hasher: inout Hasher) {
        StoredText.hashBytes(of: text, into: &hasher)
    }

    /// The text itself.
    public var description: String { text }

    /// Feeds `text`'s UTF-8 bytes and their count to `hasher` (what ``StoredText`` and
    /// ``RollupKey`` hash, so that byte-equal keys hash alike).
    package static func hashBytes(of text: String, into hasher: inout Hasher) {
        var text = text
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        hasher.combine(text.utf8.count)
    }
}
