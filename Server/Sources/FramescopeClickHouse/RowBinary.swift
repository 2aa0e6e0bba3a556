/// Rows in ClickHouse's `RowBinary` format, the insert format the store uses: exact for
/// `Float64` (18.16 parses some decimal texts one unit in the last place off) and cheaper
/// for the server than text formats.
///
/// Each value is appended in the order of the `INSERT`'s column list: integers and
/// `Float64` little-endian, `String` as a LEB128 length and its UTF-8 bytes, `Array(T)` as a
/// LEB128 count and its elements.
public struct RowBinaryWriter: Sendable {
    /// The bytes written so far.
    public private(set) var bytes: [UInt8] = []

    /// An empty writer.
    public init() {}

    /// Appends a `UInt8`.
    public mutating func append(_ value: UInt8) { bytes.append(value) }

    /// Appends a `UInt16`, little-endian.
    public mutating func append(_ value: UInt16) { appendLittleEndian(UInt64(value), count: 2) }

    /// Appends a `UInt32`, little-endian.
    public mutating func append(_ value: UInt32) { appendLittleEndian(UInt64(value), count: 4) }

    /// Appends a `UInt64`, little-endian.
    public mutating func append(_ value: UInt64) { appendLittleEndian(value, count: 8) }

    /// Appends an `Int64`, little-endian two's complement.
    public mutating func append(_ value: Int64) { appendLittleEndian(UInt64(bitPattern: value), count: 8) }

    /// Appends a `Float64`: its IEEE 754 bits, little-endian.
    public mutating func append(_ value: Double) { appendLittleEndian(value.bitPattern, count: 8) }

    /// Appends a `String`: LEB128 byte count, then the UTF-8 bytes.
    public mutating func append(_ value: String) {
        appendLength(value.utf8.count)
        bytes.append(contentsOf: value.utf8)
    }

    /// Appends an `Array(UInt64)`.
    public mutating func append(_ values: [UInt64]) {
        appendLength(values.count)
        for value in values { append(value) }
    }

    /// Appends an `Array(Float64)`.
    public mutating func append(_ values: [Double]) {
        appendLength(values.count)
        for value in values { append(value) }
    }

    /// Appends a length or count as unsigned LEB128 (7 bits a byte, low first).
    public mutating func appendLength(_ count: Int) {
        var rest = UInt64(count)
        repeat {
            let low = UInt8(rest & 0x7F)
            rest >>= 7
            bytes.append(rest == 0 ? low : low | 0x80)
        } while rest != 0
    }

    private mutating func appendLittleEndian(_ value: UInt64, count: Int) {
        for index in 0..<count { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(index)))) }
    }
}
