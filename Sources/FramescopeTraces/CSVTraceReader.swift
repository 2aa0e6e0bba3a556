#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import FramescopeCore
import FramescopeJSON

/// Reads Framescope's CSV trace format as a stream, in constant memory.
///
/// The format: a header line naming the columns `timestamp` (required),
/// `targetTimestamp` and `segment` (optional, any order), then one tick per line,
/// times in seconds. An empty `targetTimestamp` means "not known"; a non-empty
/// `segment` names the segment the tick belongs to, and a change of value starts a
/// new one. Lines starting with `#` are comments; `# refreshRate=60` declares the
/// display's refresh rate. Blank lines, a UTF-8 byte-order mark and CRLF line ends
/// are accepted; a field may be wrapped in double quotes.
///
/// A line that breaks these rules stops the read with a ``TraceError`` naming the
/// line. A timestamp that is a number but unusable (NaN, not increasing) is handed
/// on as a tick: the analyzer counts it as rejected.
struct CSVTraceReader {
    private enum Column { case timestamp, targetTimestamp, segment }

    static let chunkSize = 1 << 20
    static let maximumLineLength = 1 << 16

    let file: String

    func read<Source: ByteSource>(
        from source: inout Source,
        progress: (Int) -> Void,
        _ handle: (TraceEvent, _ line: Int) throws(TraceError) -> Void
    ) throws(TraceError) {
        let capacity = Self.chunkSize + Self.maximumLineLength
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 8)
        defer { storage.deallocate() }

        var columns: [Column] = []
        var lineNumber = 0
        var currentSegment: [UInt8]? = nil
        var sawContent = false
        var start = 0
        var end = 0
        var finished = false
        var totalRead = 0

        while true {
            let buffer = UnsafeRawBufferPointer(storage)
            let newline: Int? = {
                guard start < end else { return nil }
                guard let found = memchr(buffer.baseAddress! + start, 0x0A, end - start) else { return nil }
                return buffer.baseAddress!.distance(to: UnsafeRawPointer(found))
            }()
            let lineEnd: Int
            if let newline {
                lineEnd = newline
            } else if finished {
                if start >= end { break }
                lineEnd = end
            } else {
                if start > 0 {
                    if end > start { storage.baseAddress!.copyMemory(from: storage.baseAddress! + start, byteCount: end - start) }
                    end -= start
                    start = 0
                }
                if end >= Self.maximumLineLength && end - start >= Self.maximumLineLength {
                    throw TraceError(kind: .data, file: file, line: lineNumber + 1, message: "line is longer than \(Self.maximumLineLength) bytes; is this a trace file?")
                }
                let space = UnsafeMutableRawBufferPointer(rebasing: storage[end..<min(capacity, end + Self.chunkSize)])
                let count = try source.read(into: space)
                if count == 0 { finished = true } else {
                    if memchr(storage.baseAddress! + end, 0, count) != nil {
                        throw TraceError(kind: .data, file: file, line: lineNumber + 1, message: "contains NUL bytes: this is a binary file, not a CSV or JSON trace")
                    }
                    end += count
                    totalRead += count
                    progress(totalRead)
                }
                continue
            }

            lineNumber += 1
            var lineStart = start
            var lineStop = lineEnd
            start = newline.map { $0 + 1 } ?? end
            if lineNumber == 1, lineStop - lineStart >= 3, buffer[lineStart] == 0xEF, buffer[lineStart + 1] == 0xBB, buffer[lineStart + 2] == 0xBF { lineStart += 3 }
            if lineStop > lineStart, buffer[lineStop - 1] == UInt8(ascii: "\r") { lineStop -= 1 }
            while lineStart < lineStop, buffer[lineStart] == UInt8(ascii: " ") || buffer[lineStart] == UInt8(ascii: "\t") { lineStart += 1 }
            if lineStart == lineStop { continue }
            sawContent = true

            if buffer[lineStart] == UInt8(ascii: "#") {
                if let rate = try refreshRate(inComment: buffer, lineStart + 1, lineStop, line: lineNumber) {
                    try handle(.refreshRate(rate), lineNumber)
                }
                continue
            }

            if columns.isEmpty {
                columns = try header(buffer, lineStart, lineStop, line: lineNumber)
                continue
            }

            var timestamp: Double?
            var target: Double?
            var segmentStart = 0
            var segmentStop = 0
            var fieldStart = lineStart
            var fieldIndex = 0
            while true {
                var fieldStop = fieldStart
                while fieldStop < lineStop && buffer[fieldStop] != UInt8(ascii: ",") { fieldStop += 1 }
                guard fieldIndex < columns.count else {
                    throw TraceError(kind: .data, file: file, line: lineNumber, message: "more fields than the header's \(columns.count) columns")
                }
                var (valueStart, valueStop) = trimmed(buffer, fieldStart, fieldStop)
                if valueStop - valueStart >= 2, buffer[valueStart] == UInt8(ascii: "\""), buffer[valueStop - 1] == UInt8(ascii: "\"") {
                    valueStart += 1; valueStop -= 1
                }
                switch columns[fieldIndex] {
                case .timestamp:
                    guard valueStop > valueStart else {
                        throw TraceError(kind: .data, file: file, line: lineNumber, message: "timestamp is empty")
                    }
                    guard let value = parseDouble(buffer, valueStart, valueStop) else {
                        throw TraceError(kind: .data, file: file, line: lineNumber, message: "timestamp '\(text(buffer, valueStart, valueStop))' is not a number of seconds")
                    }
                    timestamp = value
                case .targetTimestamp:
                    if valueStop > valueStart {
                        guard let value = parseDouble(buffer, valueStart, valueStop) else {
                            throw TraceError(kind: .data, file: file, line: lineNumber, message: "targetTimestamp '\(text(buffer, valueStart, valueStop))' is not a number of seconds")
                        }
                        target = value
                    }
                case .segment:
                    segmentStart = valueStart
                    segmentStop = valueStop
                }
                fieldIndex += 1
                if fieldStop >= lineStop { break }
                fieldStart = fieldStop + 1
            }
            guard fieldIndex == columns.count else {
                throw TraceError(kind: .data, file: file, line: lineNumber, message: "\(fieldIndex) field\(fieldIndex == 1 ? "" : "s") but the header has \(columns.count) columns; a column is missing")
            }
            guard let timestamp else {
                throw TraceError(kind: .data, file: file, line: lineNumber, message: "timestamp is missing")
            }
            if let target, timestamp.isFinite, target.isFinite, target <= timestamp {
                throw TraceError(kind: .data, file: file, line: lineNumber, message: "targetTimestamp \(target) is not after timestamp \(timestamp): the refresh interval would be negative or zero")
            }
            if segmentStop > segmentStart || currentSegment != nil {
                let label = UnsafeRawBufferPointer(rebasing: buffer[segmentStart..<segmentStop])
                let same = currentSegment.map { current in
                    current.count == label.count && current.withUnsafeBytes { $0.elementsEqual(label) }
                } ?? (segmentStop == segmentStart)
                if !same {
                    if segmentStop > segmentStart {
                        let bytes = Array(label)
                        guard let name = String(utf8Validating: bytes) else {
                            throw TraceError(kind: .data, file: file, line: lineNumber, message: "segment is not valid UTF-8 text")
                        }
                        currentSegment = bytes
                        try handle(.segment(name), lineNumber)
                    } else {
                        currentSegment = nil
                        try handle(.segment(nil), lineNumber)
                    }
                }
            }
            try handle(.tick(FrameTick(timestamp: timestamp, targetTimestamp: target)), lineNumber)
        }
        if !sawContent {
            throw TraceError(kind: .data, file: file, message: "file is empty; expected a header line 'timestamp,targetTimestamp'")
        }
        if columns.isEmpty {
            throw TraceError(kind: .data, file: file, line: lineNumber, message: "no header line 'timestamp,targetTimestamp' and no ticks")
        }
    }

    private func header(_ buffer: UnsafeRawBufferPointer, _ start: Int, _ stop: Int, line: Int) throws(TraceError) -> [Column] {
        guard String(utf8Validating: UnsafeRawBufferPointer(rebasing: buffer[start..<stop])) != nil else {
            throw TraceError(kind: .data, file: file, line: line, message: "is not UTF-8 text: this is a binary file, not a CSV or JSON trace")
        }
        let names = text(buffer, start, stop).split(separator: ",", omittingEmptySubsequences: false).map {
            $0.trimmingASCIISpaces().trimmingQuotes()
        }
        var columns: [Column] = []
        for name in names {
            let column: Column
            switch name.lowercased() {
            case "timestamp": column = .timestamp
            case "targettimestamp": column = .targetTimestamp
            case "segment": column = .segment
            default:
                if line == 1, name.first.map({ $0.isNumber || $0 == "-" || $0 == "." }) == true {
                    throw TraceError(kind: .data, file: file, line: line, message: "missing header line; the first line must name the columns, e.g. 'timestamp,targetTimestamp'")
                }
                throw TraceError(kind: .data, file: file, line: line, message: "unknown column '\(name)'; the columns are timestamp, targetTimestamp and segment")
            }
            if columns.contains(column) {
                throw TraceError(kind: .data, file: file, line: line, message: "column '\(name)' appears twice")
            }
            columns.append(column)
        }
        guard columns.contains(.timestamp) else {
            throw TraceError(kind: .data, file: file, line: line, message: "missing column 'timestamp' in the header")
        }
        return columns
    }

    private func refreshRate(inComment buffer: UnsafeRawBufferPointer, _ start: Int, _ stop: Int, line: Int) throws(TraceError) -> Double? {
        let comment = text(buffer, start, stop).trimmingASCIISpaces()
        guard comment.lowercased().hasPrefix("refreshrate") else { return nil }
        let value = comment.dropFirst("refreshrate".count).trimmingASCIISpaces()
        guard value.first == "=" || value.first == ":" else { return nil }
        let number = value.dropFirst().trimmingASCIISpaces()
        guard let rate = Double(number), rate.isFinite, rate > 0 else {
            throw TraceError(kind: .data, file: file, line: line, message: "refreshRate '\(number)' must be a positive number of Hz")
        }
        return rate
    }

    private func trimmed(_ buffer: UnsafeRawBufferPointer, _ start: Int, _ stop: Int) -> (Int, Int) {
        var low = start
        var high = stop
        while low < high, buffer[low] == UInt8(ascii: " ") || buffer[low] == UInt8(ascii: "\t") { low += 1 }
        while high > low, buffer[high - 1] == UInt8(ascii: " ") || buffer[high - 1] == UInt8(ascii: "\t") { high -= 1 }
        return (low, high)
    }

    private func text(_ buffer: UnsafeRawBufferPointer, _ start: Int, _ stop: Int) -> String {
        let slice = UnsafeRawBufferPointer(rebasing: buffer[start..<min(stop, start + 200)])
        return String(decoding: slice, as: UTF8.self)
    }
}

extension StringProtocol {
    func trimmingASCIISpaces() -> String {
        var slice = Substring(self)
        while let first = slice.first, first == " " || first == "\t" { slice = slice.dropFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice = slice.dropLast() }
        return String(slice)
    }

    func trimmingQuotes() -> String {
        if count >= 2, first == "\"", last == "\"" { return String(dropFirst().dropLast()) }
        return String(self)
    }
}
