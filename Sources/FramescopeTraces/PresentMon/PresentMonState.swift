#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import FramescopeCore
import FramescopeJSON

/// What the lines of a PresentMon CSV have said so far: the header, the swap chains seen
/// with their counts, and the rows held until the unit of the start times is known.
struct PresentMonState {
    typealias Role = PresentMonColumns.Role
    let file: String
    private var columns: PresentMonColumns?
    private var known: [Known] = []
    private var lastKnown = 0
    private var announced: Int?
    private var key: [UInt8] = []
    private var starts = [Int](repeating: 0, count: Role.allCases.count)
    private var ends = [Int](repeating: -1, count: Role.allCases.count)
    /// Seconds per unit of the start-time column, once known.
    private var scale: Double?
    private var pending: [Row] = []
    private var notes: [String] = []
    private var lastLine = 0
    private var metadataLines = 0

    /// Most `//key=value` lines read before the header (CapFrameX writes 17).
    static let maximumMetadataLines = 64
    /// The longest `//key=value` line read before the header, in bytes.
    static let maximumMetadataBytes = 512

    /// Rows held at most while the unit of the start times is measured.
    static let maximumPendingRows = 10_000
    /// Most swap chains told apart.
    static let maximumSwapChains = 10_000
    /// The performance counter's frequency on every Windows since 10 (1607), in Hz.
    static let usualCounterFrequency = 10_000_000.0
    /// The longest display offset accepted, in ms (an hour).
    static let maximumDisplayOffset = 3_600_000.0

    /// A swap chain: its source, and counts of its presents.
    private struct Known {
        var key: [UInt8]
        var source: TraceSource
        var presents = 0
        var displayed = 0
        var lastStart: Double?
        var lastDelta: Double?
    }

    /// A present waiting for the unit of its start time.
    private struct Row {
        var swapChain: Int
        var start: Double
        var offset: Double?
        var displayed: Bool
        var line: Int
    }

    init(file: String) { self.file = file }

    mutating func take(_ bytes: UnsafeRawBufferPointer, _ number: Int,
                       _ handle: (TraceEvent, _ line: Int) throws(TraceError) -> Void) throws(TraceError) {
        lastLine = number
        var low = 0
        var high = bytes.count
        if number == 1, high >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { low = 3 }
        while high > low, bytes[high - 1] == UInt8(ascii: "\r") || bytes[high - 1] == UInt8(ascii: " ") { high -= 1 }
        if high == low { return }
        let line = UnsafeRawBufferPointer(rebasing: bytes[low..<high])
        guard let columns else {
            if line.count >= 2, line[0] == UInt8(ascii: "/"), line[1] == UInt8(ascii: "/") {
                try handle(try metadata(line, number), number)
            } else {
                try readHeader(line, number)
            }
            return
        }
        try split(line, columns, number)
        try present(line, columns, number, handle)
    }

    /// A `//key=value` line before the header, as CapFrameX writes what it captured
    /// (`//GameName=re2.exe`, `//GPU=NVIDIA GeForce RTX 2080`).
    private mutating func metadata(_ line: UnsafeRawBufferPointer, _ number: Int) throws(TraceError) -> TraceEvent {
        metadataLines += 1
        guard metadataLines <= Self.maximumMetadataLines else {
            throw refuse(number, "more than \(Self.maximumMetadataLines) '//' lines before the header; is this a PresentMon or CapFrameX CSV?")
        }
        guard line.count <= Self.maximumMetadataBytes, let text = String(utf8Validating: line.dropFirst(2)),
              let equals = text.firstIndex(of: "=") else {
            throw refuse(number, "a '//' line before the header must be key=value text of at most \(Self.maximumMetadataBytes) bytes, as CapFrameX writes (//GameName=re2.exe)")
        }
        let key = text[..<equals].trimmingWhitespace()
        guard !key.isEmpty else { throw refuse(number, "a '//' line before the header has no key before '='") }
        return .metadata(key: String(key).printable(), value: String(text[text.index(after: equals)...].trimmingWhitespace()).printable())
    }

    private mutating func readHeader(_ line: UnsafeRawBufferPointer, _ number: Int) throws(TraceError) {
        guard let text = String(utf8Validating: line) else {
            throw refuse(number, "the header is not UTF-8 text; is this a PresentMon CSV?")
        }
        let names = text.split(separator: ",", omittingEmptySubsequences: false).map { String($0.trimmingWhitespace().trimmingQuotes()) }
        switch PresentMonColumns.parse(names) {
        case let .success(parsed):
            columns = parsed
            if parsed.delta == nil, parsed.timeUnit == .performanceCounter || parsed.timeUnit == .secondsOrMilliseconds {
                resolveByDefault(parsed, reason: "the file has no MsBetweenPresents or FrameTime column to measure it with")
            } else if parsed.timeUnit == .seconds {
                scale = 1
            } else if parsed.timeUnit == .milliseconds {
                scale = 1e-3
            }
            if !parsed.hasDisplay {
                notes.append("the file has no display times (recorded with --no_track_display?): ticks are the times of the present calls, not of the screen")
            }
        case let .failure(problem):
            throw refuse(number, problem.message)
        }
    }

    /// Finds each role's field in `line`; quoted fields may hold commas.
    private mutating func split(_ line: UnsafeRawBufferPointer, _ columns: PresentMonColumns, _ number: Int) throws(TraceError) {
        var position = 0
        var field = 0
        let count = line.count
        guard let base = line.baseAddress else { return }
        while field < columns.neededFields {
            var fieldStart = position
            var fieldEnd: Int
            if position < count, line[position] == UInt8(ascii: "\"") {
                position += 1
                fieldStart = position
                while position < count {
                    if line[position] == UInt8(ascii: "\"") {
                        if position + 1 < count, line[position + 1] == UInt8(ascii: "\"") { position += 2; continue }
                        break
                    }
                    position += 1
                }
                guard position < count else { throw refuse(number, "field \(field + 1) opens a quote that does not close") }
                fieldEnd = position
                position += 1
                guard position == count || line[position] == UInt8(ascii: ",") else {
                    throw refuse(number, "field \(field + 1) has text after its closing quote")
                }
            } else if let comma = memchr(base + position, Int32(UInt8(ascii: ",")), count - position) {
                fieldEnd = base.distance(to: UnsafeRawPointer(comma))
                position = fieldEnd
            } else {
                fieldEnd = count
                position = count
            }
            if let role = columns.roles[field] {
                starts[role.rawValue] = fieldStart
                ends[role.rawValue] = fieldEnd
            }
            field += 1
            if position >= count { break }
            position += 1
        }
        guard field >= columns.neededFields else {
            throw refuse(number, "\(field) field\(field == 1 ? "" : "s"), but the columns read reach field \(columns.neededFields) of the header")
        }
    }

    private func text(_ line: UnsafeRawBufferPointer, _ role: Role) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: line[starts[role.rawValue]..<ends[role.rawValue]])
    }

    private func shown(_ bytes: UnsafeRawBufferPointer) -> String {
        String(decoding: bytes.prefix(40), as: UTF8.self).printable()
    }

    private func number(_ line: UnsafeRawBufferPointer, _ role: Role) -> Double?? {
        let bytes = text(line, role)
        if bytes.isEmpty || bytes.elementsEqual("NA".utf8) { return .some(nil) }
        guard let value = parseDouble(bytes, 0, bytes.count), value.isFinite else { return nil }
        return .some(value)
    }

    private mutating func present(_ line: UnsafeRawBufferPointer, _ columns: PresentMonColumns, _ number: Int,
                                  _ handle: (TraceEvent, _ line: Int) throws(TraceError) -> Void) throws(TraceError) {
        guard case let .some(.some(start)) = self.number(line, .time), (0...1e18).contains(start) else {
            throw refuse(number, "\(columns.timeColumn) '\(shown(text(line, .time)))' is not a time")
        }
        var dropped = false
        if columns.hasDropped {
            let flag = text(line, .dropped)
            guard flag.count == 1, flag[0] == UInt8(ascii: "0") || flag[0] == UInt8(ascii: "1") else {
                throw refuse(number, "Dropped '\(shown(flag))' is not 0 or 1")
            }
            dropped = flag[0] == UInt8(ascii: "1")
        }
        var offset: Double?
        if columns.hasDisplay {
            guard case let .some(value) = self.number(line, .untilDisplayed) else {
                throw refuse(number, "display time '\(shown(text(line, .untilDisplayed)))' is not a number of ms or NA")
            }
            if let value, !(0...Self.maximumDisplayOffset).contains(value) {
                throw refuse(number, "display time \(value) ms is negative or longer than an hour")
            }
            offset = value
        }
        var delta: Double?
        if columns.delta != nil, case let .some(value) = self.number(line, .delta) { delta = value }
        let chain = try swapChain(line, columns, number)
        let displayed = !dropped && (!columns.hasDisplay || offset != nil)
        known[chain].presents += 1
        if displayed { known[chain].displayed += 1 }
        if scale == nil { measureUnit(columns, chain: chain, start: start, delta: delta) }
        defer {
            known[chain].lastStart = start
            known[chain].lastDelta = delta
        }
        let row = Row(swapChain: chain, start: start, offset: offset, displayed: displayed, line: number)
        guard let scale, pending.isEmpty else {
            pending.append(row)
            if scale == nil, pending.count >= Self.maximumPendingRows {
                resolveByDefault(columns, reason: "no two presents of a swap chain in the first \(Self.maximumPendingRows) rows measured it")
            }
            try flushPending(handle)
            return
        }
        try emit(row, scale: scale, handle)
    }

    /// The index of the row's swap chain, added when new.
    private mutating func swapChain(_ line: UnsafeRawBufferPointer, _ columns: PresentMonColumns, _ number: Int) throws(TraceError) -> Int {
        let application = text(line, .application)
        let processID = columns.hasProcessID ? text(line, .processID) : UnsafeRawBufferPointer(start: nil, count: 0)
        let chain = columns.hasSwapChain ? text(line, .swapChain) : UnsafeRawBufferPointer(start: nil, count: 0)
        key.removeAll(keepingCapacity: true)
        key.append(contentsOf: application)
        key.append(0)
        key.append(contentsOf: processID)
        key.append(0)
        key.append(contentsOf: chain)
        if lastKnown < known.count, known[lastKnown].key == key { return lastKnown }
        if let found = known.firstIndex(where: { $0.key == key }) {
            lastKnown = found
            return found
        }
        guard known.count < Self.maximumSwapChains else {
            throw refuse(number, "more than \(Self.maximumSwapChains) swap chains; is this a PresentMon CSV?")
        }
        guard application.count <= PresentMonReader.maximumNameBytes, chain.count <= PresentMonReader.maximumNameBytes,
              let name = String(utf8Validating: application), let address = String(utf8Validating: chain) else {
            throw refuse(number, "the application's name or swap chain is not UTF-8 text of at most \(PresentMonReader.maximumNameBytes) bytes")
        }
        var pid: Int?
        if processID.count > 0 {
            guard processID.count <= 10, processID.allSatisfy({ $0 &- UInt8(ascii: "0") < 10 }), let value = Int(String(decoding: processID, as: UTF8.self)) else {
                throw refuse(number, "ProcessID '\(shown(processID))' is not a whole number")
            }
            pid = value
        }
        let source = TraceSource(
            application: name.isEmpty ? "(unnamed)" : Self.unescapingQuotes(name).printable(),
            processID: pid,
            detail: address.isEmpty ? nil : "swap chain \(address.printable())",
            variableCadence: true,
            role: SystemProcesses.reason(for: name).map(TraceSource.Role.system) ?? .application
        )
        known.append(Known(key: key, source: source))
        lastKnown = known.count - 1
        return lastKnown
    }

    /// Measures the start times' unit from two consecutive presents of one swap chain and
    /// the frame time between them.
    private mutating func measureUnit(_ columns: PresentMonColumns, chain: Int, start: Double, delta: Double?) {
        guard let previous = known[chain].lastStart, start > previous else { return }
        let milliseconds = columns.delta == .sincePrevious ? delta : known[chain].lastDelta
        guard let milliseconds, milliseconds > 0.05 else { return }
        let unitsPerMillisecond = (start - previous) / milliseconds
        switch columns.timeUnit {
        case .performanceCounter:
            var frequency = unitsPerMillisecond * 1000
            guard (1_000...1e11).contains(frequency) else { return }
            if abs(frequency / Self.usualCounterFrequency - 1) < 0.005 {
                frequency = Self.usualCounterFrequency
            } else {
                notes.append("\(columns.timeColumn) counts at \(Int(frequency.rounded())) Hz, measured from two presents and the frame time between them")
            }
            scale = 1 / frequency
        case .secondsOrMilliseconds:
            if abs(unitsPerMillisecond / 1e-3 - 1) < 0.05 { scale = 1 }
            else if abs(unitsPerMillisecond - 1) < 0.05 { scale = 1e-3 }
        case .seconds, .milliseconds:
            break
        }
    }

    private mutating func resolveByDefault(_ columns: PresentMonColumns, reason: String) {
        if columns.timeUnit == .performanceCounter {
            scale = 1 / Self.usualCounterFrequency
            notes.append("\(columns.timeColumn) read at 10 MHz, the performance counter's frequency on Windows 10 and later: \(reason)")
        } else {
            scale = 1
            notes.append("\(columns.timeColumn) read as seconds: \(reason)")
        }
    }

    private mutating func flushPending(_ handle: (TraceEvent, _ line: Int) throws(TraceError) -> Void) throws(TraceError) {
        guard let scale, !pending.isEmpty else { return }
        let held = pending
        pending = []
        for row in held { try emit(row, scale: scale, handle) }
    }

    private mutating func emit(_ row: Row, scale: Double, _ handle: (TraceEvent, _ line: Int) throws(TraceError) -> Void) throws(TraceError) {
        if announced != row.swapChain {
            announced = row.swapChain
            try handle(.source(known[row.swapChain].source), row.line)
        }
        guard row.displayed else {
            try handle(.missed, row.line)
            return
        }
        let seconds = row.start * scale + (row.offset ?? 0) / 1000
        try handle(.tick(FrameTick(timestamp: seconds, targetTimestamp: nil)), row.line)
    }

    /// Hands on the rows still held and each swap chain's counts, as PresentMon's figures.
    mutating func finish(note: (String) -> Void, _ handle: (TraceEvent, _ line: Int) throws(TraceError) -> Void) throws(TraceError) {
        guard let columns else {
            throw TraceError(kind: .data, file: file, message: "is empty; expected PresentMon's header line 'Application,ProcessID,…'")
        }
        guard !known.isEmpty else { throw refuse(lastLine, "has a header but no presents") }
        if scale == nil {
            resolveByDefault(columns, reason: "no two presents of a swap chain measured it")
        }
        try flushPending(handle)
        for chain in known.indices {
            try handle(.source(known[chain].source), lastLine)
            let presents = known[chain].presents
            try handle(.toolFigure(ToolFigure(tool: "PresentMon", label: "Presents", value: Double(presents), unit: "frames", metrics: [.frames])), lastLine)
            try handle(.toolFigure(ToolFigure(tool: "PresentMon", label: "Not displayed (dropped)", value: Double(presents - known[chain].displayed), unit: "frames", metrics: [.droppedFrames])), lastLine)
        }
        for message in notes { note(message) }
    }

    /// A quoted field's text with each doubled quote (`""`) made one.
    private static func unescapingQuotes(_ text: String) -> String {
        var result = ""
        var previousWasQuote = false
        for character in text {
            if character == "\"", previousWasQuote { previousWasQuote = false; continue }
            previousWasQuote = character == "\""
            result.append(character)
        }
        return result
    }

    private func refuse(_ line: Int, _ message: String) -> TraceError {
        TraceError(kind: .data, file: file, line: line, message: message)
    }
}
