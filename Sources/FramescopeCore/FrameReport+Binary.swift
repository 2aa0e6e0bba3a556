/// A compact binary form of a report for storage (the collector's rollup rows): the
/// mergeable state only, as LEB128 varints and IEEE 754 bit patterns, with histograms
/// and tallies delta-coded. It decodes about an order of magnitude faster than the JSON
/// form and is checked the same way (``FrameReport/inconsistency``).
///
/// Layout, version 1: the byte `1`; the thirteen counters of ``FrameReport/counters`` in
/// their order (`frames`, `durationNanoseconds`, `firstFrames`, `firstDurationNanoseconds`,
/// `droppedFrames`, `dropEvents`, `maxDroppedFrames`, `hitchTimeNanoseconds`, `hangs`,
/// `hangTimeNanoseconds`, `slowFrames`, `frozenFrames`, `rejectedTicks`) as varints (the
/// four nanosecond totals as varints of up to 128 bits, which read as 64-bit varints
/// wherever they fit); `minFrameDuration` and
/// `maxFrameDuration` as 8-byte bit patterns (NaN for none); `stabilityBand` as 8
/// bytes; then the frame-duration buckets, the window-FPS tally and the refresh-rate
/// tally, each as a count followed by (index delta, count) varint pairs.
extension FrameReport {
    /// The binary form's version byte.
    public static let binaryVersion: UInt8 = 1

    /// The report's mergeable state in the compact binary form.
    public func binaryEncoded() -> [UInt8] {
        var writer = BinaryWriter()
        writer.bytes.reserveCapacity(64 + frameDurations.buckets.count * 3 + windowFPS.entries.count * 4)
        writer.bytes.append(Self.binaryVersion)
        for counter in Self.counters {
            switch counter.kind {
            case .count, .maximum: writer.unsigned(UInt64(clamping: self[count: counter]))
            case .nanoseconds: writer.total(self[nanoseconds: counter])
            }
        }
        writer.double(minFrameDuration ?? .nan)
        writer.double(maxFrameDuration ?? .nan)
        writer.double(stabilityBand)
        writer.pairs(frameDurations.buckets.map { ($0.index, $0.count) })
        writer.pairs(windowFPS.entries.map { ($0.key, $0.count) })
        writer.pairs(refreshRates.entries.map { ($0.key, $0.count) })
        return writer.bytes
    }

    /// Decodes ``binaryEncoded()`` output and checks it.
    /// - Parameter maximumTallyEntries: The most entries ``windowFPS`` and ``refreshRates``
    ///   may each hold, refused before they are read: ``maximumTallyEntriesPerVisit`` for
    ///   a device's report, unbounded for a stored rollup.
    /// - Throws: ``BinaryReportError`` when the bytes are cut short, of another version,
    ///   out of range, or describe an inconsistent report.
    public init(binary bytes: some Collection<UInt8>, maximumTallyEntries: Int = .max) throws(BinaryReportError) {
        var reader = BinaryReader(bytes: Array(bytes))
        guard try reader.byte() == Self.binaryVersion else { throw BinaryReportError("unknown binary report version") }
        self.init()
        for counter in Self.counters {
            switch counter.kind {
            case .count, .maximum: self[count: counter] = try reader.count()
            case .nanoseconds: self[nanoseconds: counter] = try reader.total()
            }
        }
        let low = try reader.double()
        let high = try reader.double()
        minFrameDuration = low.isNaN ? nil : low
        maxFrameDuration = high.isNaN ? nil : high
        stabilityBand = try reader.double()
        frameDurations = try reader.histogram()
        // A tally's refusal names it: the entry count is checked before any entry is read.
        do { windowFPS = try reader.tally(maximumEntries: maximumTallyEntries) } catch { throw BinaryReportError("windowFPS: \(error.message)") }
        do { refreshRates = try reader.tally(maximumEntries: maximumTallyEntries) } catch { throw BinaryReportError("refreshRates: \(error.message)") }
        guard reader.isAtEnd else { throw BinaryReportError("trailing bytes after the report") }
        if let (field, message) = inconsistency { throw BinaryReportError("\(field): \(message)") }
    }
}

/// Bytes that are not a binary report.
public struct BinaryReportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong.
    public var message: String

    /// Creates an error.
    public init(_ message: String) {
        self.message = message
    }

    /// The message.
    public var description: String { "binary report: \(message)" }
}

/// Appends varints, doubles and delta-coded pairs.
public struct BinaryWriter: Sendable {
    /// The bytes written so far.
    public var bytes: [UInt8] = []

    /// An empty writer.
    public init() {}

    /// Appends `value` as an unsigned LEB128 varint.
    public mutating func unsigned(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    /// Appends a 128-bit total as an unsigned LEB128 varint (the same bytes as
    /// ``unsigned(_:)`` for totals below 2⁶⁴).
    public mutating func total(_ value: NanosecondTotal) {
        var (high, low) = (value.high, value.low)
        while high > 0 || low >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: low) | 0x80)
            low = (low >> 7) | (high << 57)
            high >>= 7
        }
        bytes.append(UInt8(low))
    }

    /// Appends `value`'s IEEE 754 bit pattern, little-endian.
    public mutating func double(_ value: Double) {
        var bits = value.bitPattern
        for _ in 0..<8 {
            bytes.append(UInt8(truncatingIfNeeded: bits))
            bits >>= 8
        }
    }

    /// Appends a name as its UTF-8 length (a varint) and its UTF-8 bytes.
    public mutating func name(_ name: String) {
        unsigned(UInt64(name.utf8.count))
        bytes.append(contentsOf: name.utf8)
    }

    /// Appends a count and then each pair as (key − previous key, value); keys ascending and ≥ 0.
    public mutating func pairs(_ pairs: [(Int, Int)]) {
        unsigned(UInt64(pairs.count))
        var previous = 0
        for (key, value) in pairs {
            unsigned(UInt64(clamping: key - previous))
            unsigned(UInt64(clamping: value))
            previous = key
        }
    }
}

/// Reads what ``BinaryWriter`` wrote, refusing short or out-of-range input.
public struct BinaryReader: Sendable {
    private let bytes: [UInt8]
    private var position = 0

    /// A reader at the start of `bytes`.
    public init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Whether every byte was read.
    public var isAtEnd: Bool { position == bytes.count }

    /// One byte.
    public mutating func byte() throws(BinaryReportError) -> UInt8 {
        guard position < bytes.count else { throw BinaryReportError("cut short") }
        defer { position += 1 }
        return bytes[position]
    }

    /// A name written by ``BinaryWriter/name(_:)``: its UTF-8 bytes, at most
    /// `maximumLength` of them.
    public mutating func name(maximumLength: Int) throws(BinaryReportError) -> ArraySlice<UInt8> {
        let length = try count()
        guard length <= maximumLength, length <= bytes.count - position else { throw BinaryReportError("name too long") }
        defer { position += length }
        return bytes[position..<position + length]
    }

    /// An unsigned LEB128 varint of at most 64 bits.
    public mutating func unsigned() throws(BinaryReportError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let next = try byte()
            guard shift < 64 else { throw BinaryReportError("varint too long") }
            result |= UInt64(next & 0x7F) << shift
            if next & 0x80 == 0 { return result }
            shift += 7
        }
    }

    /// A varint that fits a non-negative `Int`.
    public mutating func count() throws(BinaryReportError) -> Int {
        let value = try unsigned()
        guard value <= UInt64(Int.max) else { throw BinaryReportError("count out of range") }
        return Int(value)
    }

    /// A varint of up to 128 bits: a nanosecond total.
    public mutating func total() throws(BinaryReportError) -> NanosecondTotal {
        var (high, low): (UInt64, UInt64) = (0, 0)
        var shift: UInt64 = 0
        while true {
            let next = try byte()
            guard shift < 128 else { throw BinaryReportError("varint too long") }
            let bits = UInt64(next & 0x7F)
            if shift < 64 {
                low |= bits << shift
                if shift > 57 { high |= bits >> (64 - shift) }
            } else {
                guard shift < 121 || bits >> (128 - shift) == 0 else { throw BinaryReportError("duration out of range") }
                high |= bits << (shift - 64)
            }
            if next & 0x80 == 0 { return NanosecondTotal(high: high, low: low) }
            shift += 7
        }
    }

    /// An 8-byte little-endian double.
    public mutating func double() throws(BinaryReportError) -> Double {
        var bits: UInt64 = 0
        for shift in stride(from: 0, to: 64, by: 8) { bits |= UInt64(try byte()) << UInt64(shift) }
        return Double(bitPattern: bits)
    }

    /// A duration histogram written as delta-coded pairs, checked.
    public mutating func histogram() throws(BinaryReportError) -> DurationHistogram {
        let pairs = try self.pairs()
        do {
            return try DurationHistogram(buckets: pairs.map { DurationHistogram.Bucket(index: $0.0, count: $0.1) })
        } catch {
            throw BinaryReportError(error.description)
        }
    }

    /// A tally written as delta-coded pairs, checked; at most `maximumEntries` of them.
    public mutating func tally(maximumEntries: Int = .max) throws(BinaryReportError) -> Tally {
        let pairs = try self.pairs(maximumCount: maximumEntries)
        do {
            return try Tally(entries: pairs.map { Tally.Entry(key: $0.0, count: $0.1) })
        } catch {
            throw BinaryReportError(error.description)
        }
    }

    /// A count and delta-coded pairs, as ``BinaryWriter/pairs(_:)`` wrote them.
    public mutating func pairs(maximumCount: Int = .max) throws(BinaryReportError) -> [(Int, Int)] {
        let count = try self.count()
        guard count <= maximumCount else { throw BinaryReportError("\(count) entries, more than the \(maximumCount) allowed") }
        guard count <= bytes.count - position else { throw BinaryReportError("pair count exceeds the data") }
        var result: [(Int, Int)] = []
        result.reserveCapacity(count)
        var key = 0
        for _ in 0..<count {
            let (sum, overflow) = key.addingReportingOverflow(try self.count())
            guard !overflow else { throw BinaryReportError("key out of range") }
            key = sum
            result.append((key, try self.count()))
        }
        return result
    }
}
