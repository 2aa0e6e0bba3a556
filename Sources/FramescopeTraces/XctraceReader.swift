import FramescopeCore

/// Reads the XML of Instruments' `xcrun xctrace export --xpath '…table[@schema="…"]'` as a
/// stream: the display tables as ticks, the hitch and hang tables as the frames they stand
/// for and as Instruments' own figures.
///
/// ```
/// <node xpath='…'><schema name="hitches"><col><mnemonic>start</mnemonic>…</col>…</schema>
/// <row><start-time id="1" fmt="00:04.961">4961155833</start-time><duration id="2" fmt="216.67 ms">216666666</duration>…</row>
/// <row><start-time id="11" …>13961169916</start-time><duration ref="2"/>…</row>
/// ```
///
/// A value appears once with `id="n"`; later rows point back to it with `<tag ref="n"/>`.
/// The reader keeps the values of the columns it reads by id (only those: memory grows with
/// the distinct values of those columns, at most ``maximumIDs``). Times are nanoseconds.
/// Field by field: `docs/traces.md`.
struct XctraceReader {
    let file: String

    /// The most distinct values kept for `ref` lookups.
    static let maximumIDs = 8_000_000
    /// The most distinct hitch or hang durations kept until the end of the file.
    static let maximumDurations = 1_000_000
    /// Rows of a display table read before its refresh rate is declared (from their
    /// shortest interval).
    static let rateSampleRows = 120
    /// The tool's name in ``ToolFigure/tool``.
    static let tool = "Instruments"

    /// What Framescope does with each table it reads, by schema name.
    enum Table: String, CaseIterable {
        case hitches
        case potentialHangs = "potential-hangs"
        case vsyncs = "display-vsyncs-interval"
        case surfaceSwaps = "display-surface-swap"
        case displayedSurfaces = "displayed-surfaces-interval"
        case renders = "hitches-renders"

        /// The columns read, by mnemonic.
        var columns: [String] {
            switch self {
            case .hitches: ["start", "duration"]
            case .potentialHangs: ["start", "duration", "hang-type"]
            case .vsyncs, .surfaceSwaps: ["timestamp"]
            case .displayedSurfaces, .renders: ["start"]
            }
        }

        var givesTicks: Bool {
            switch self {
            case .hitches, .potentialHangs: false
            default: true
            }
        }
    }

    /// Whether `prefix` is an xctrace export: its root element within the first bytes.
    /// Whether `bytes` spell `word` (no String made: names are compared per tag).
    static func equals(_ bytes: XMLBytes, _ word: StaticString) -> Bool {
        guard bytes.count == word.utf8CodeUnitCount else { return false }
        return word.withUTF8Buffer { expected in
            var offset = 0
            for byte in bytes {
                if byte != expected[offset] { return false }
                offset += 1
            }
            return true
        }
    }

    /// A whole number of at most 18 decimal digits (an `id` or `ref`), or `nil`.
    static func integer(_ bytes: XMLBytes) -> Int? {
        guard !bytes.isEmpty, bytes.count <= 18 else { return nil }
        var value = 0
        for byte in bytes {
            guard byte &- 0x30 < 10 else { return nil }
            value = value * 10 + Int(byte &- 0x30)
        }
        return value
    }

    static func matches(prefix: some Collection<UInt8>) -> Bool {
        String(decoding: prefix, as: UTF8.self).contains("<trace-query-result")
    }

    func read<Source: ByteSource>(
        from source: inout Source,
        progress: (Int) -> Void,
        note: (String) -> Void,
        _ handle: (TraceEvent, _ line: Int) throws(TraceError) -> Void
    ) throws(TraceError) {
        var state = State(file: file)
        try XMLTokenizer(file: file).tokens(of: &source, progress: progress) { (token, line) throws(TraceError) in
            try state.take(token, line: line, handle)
        }
        try state.finish(note: note, handle)
    }

    /// The reader's state across tokens.
    private struct State {
        let file: String
        var depth = 0
        // The schema being read.
        var inSchema = false
        var schemaName: String?
        var columns: [(mnemonic: String, type: String)] = []
        var textTarget: TextTarget = .none
        var text: [UInt8] = []
        var table: Table?
        var wanted: [Int?] = []           // per column: index into table.columns
        var wantedTypes: [[UInt8]] = []   // element names of the columns read, for ids
        var tablesSeen: [String] = []
        var skippedTables: [String] = []
        // The row being read.
        var rowDepth: Int?
        var column = -1
        var values: [String?] = []
        var capture: (depth: Int, id: Int?, column: Int?)?
        var ids: [Int: String] = [:]
        // What the tables gave.
        var tickTables = 0
        var pendingTicks: [(Int64, Int)] = []   // a display table's first rows, with lines
        var rateDeclared = false
        var previousVsync: (Int64, Int)?
        var lastVsyncInterval: Int64?
        var lastTimestamp: Int64?
        var hitchDurations: [Int64: Int] = [:]
        var hitchCount = 0
        var hitchTotal = NanosecondTotal.zero
        var hitchLine = 0
        var hangDurations: [Int64: Int] = [:]
        var hangTypes: [(String, Int)] = []
        var hangCount = 0
        var hangLongest: Int64 = 0
        var hangLine = 0

        enum TextTarget { case none, mnemonic, engineeringType }

        init(file: String) { self.file = file }

        func refuse(_ line: Int?, _ message: String) -> TraceError {
            TraceError(kind: .data, file: file, line: line, message: message)
        }

        mutating func take(_ token: XMLTokenizer.Token, line: Int, _ handle: (TraceEvent, Int) throws(TraceError) -> Void) throws(TraceError) {
            switch token {
            case let .start(name, attributes, selfClosing):
                try start(name, attributes, selfClosing: selfClosing, line: line, handle)
                if !selfClosing { depth += 1 }
            case let .end(name):
                depth -= 1
                guard depth >= 0 else { throw refuse(line, "an end tag '</\(String(decoding: name, as: UTF8.self).printable())>' without its start") }
                try end(name, line: line, handle)
            case let .text(bytes, _):
                if textTarget != .none || capture != nil { text.append(contentsOf: bytes) }
            }
        }

        mutating func start(_ name: XMLBytes, _ attributes: [(name: XMLBytes, value: XMLBytes)], selfClosing: Bool,
                            line: Int, _ handle: (TraceEvent, Int) throws(TraceError) -> Void) throws(TraceError) {
            func attribute(_ key: StaticString) -> XMLBytes? {
                attributes.first { XctraceReader.equals($0.name, key) }?.value
            }
            if XctraceReader.equals(name, "schema") {
                inSchema = true
                schemaName = attribute("name").map { XMLTokenizer.decode($0) }
                columns = []
                return
            }
            if inSchema {
                if XctraceReader.equals(name, "col") { columns.append(("", "")) }
                if XctraceReader.equals(name, "mnemonic") { textTarget = .mnemonic; text.removeAll(keepingCapacity: true) }
                if XctraceReader.equals(name, "engineering-type") { textTarget = .engineeringType; text.removeAll(keepingCapacity: true) }
                return
            }
            if XctraceReader.equals(name, "row"), rowDepth == nil {
                guard table != nil || schemaName != nil else { throw refuse(line, "a <row> before any <schema>") }
                rowDepth = depth
                column = -1
                values = Array(repeating: nil, count: table?.columns.count ?? 0)
                if selfClosing { try endRow(line: line, handle) }
                return
            }
            guard let rowDepth, table != nil else { return }
            let topLevel = depth == rowDepth + 1
            if topLevel { column += 1 }
            let slot = topLevel && column < wanted.count ? wanted[column] : nil
            if let reference = attribute("ref") {
                guard let id = XctraceReader.integer(reference) else { throw refuse(line, "ref=\"\(String(decoding: reference, as: UTF8.self).printable())\" is not a number") }
                if let slot {
                    guard let value = ids[id] else { throw refuse(line, "ref=\"\(id)\" points to no earlier value with id=\"\(id)\"") }
                    values[slot] = value
                }
                return
            }
            guard slot != nil || wantedTypes.contains(where: { $0.elementsEqual(name) }) else { return }
            var id: Int?
            if let raw = attribute("id") {
                guard let number = XctraceReader.integer(raw) else { throw refuse(line, "id=\"\(String(decoding: raw, as: UTF8.self).printable())\" is not a number") }
                id = number
            }
            if selfClosing {
                if let id { try remember(id, "", line: line) }
                return
            }
            if capture == nil {
                capture = (depth, id, slot)
                text.removeAll(keepingCapacity: true)
            }
        }

        mutating func remember(_ id: Int, _ value: String, line: Int) throws(TraceError) {
            guard ids.count < XctraceReader.maximumIDs || ids[id] != nil else {
                throw refuse(line, "more than \(XctraceReader.maximumIDs) distinct values with an id in the columns read; export one table at a time")
            }
            ids[id] = value
        }

        mutating func end(_ name: XMLBytes, line: Int, _ handle: (TraceEvent, Int) throws(TraceError) -> Void) throws(TraceError) {
            if inSchema {
                switch textTarget {
                case .mnemonic: if !columns.isEmpty { columns[columns.count - 1].mnemonic = XMLTokenizer.decode(text) }
                case .engineeringType: if !columns.isEmpty { columns[columns.count - 1].type = XMLTokenizer.decode(text) }
                case .none: break
                }
                textTarget = .none
                if XctraceReader.equals(name, "schema") {
                    inSchema = false
                    try beginTable(line: line, handle)
                }
                return
            }
            if let open = capture, open.depth == depth {
                capture = nil
                let value = XMLTokenizer.decode(text).trimmingWhitespace()
                if let id = open.id { try remember(id, String(value), line: line) }
                if let slot = open.column { values[slot] = String(value) }
            }
            if let rowDepth, depth == rowDepth, XctraceReader.equals(name, "row") {
                try endRow(line: line, handle)
            }
        }

        mutating func beginTable(line: Int, _ handle: (TraceEvent, Int) throws(TraceError) -> Void) throws(TraceError) {
            try flushDisplayTable(handle)
            let name = (schemaName ?? "").printable()
            tablesSeen.append(name)
            table = Table(rawValue: name)
            guard let table else {
                skippedTables.append(name)
                wanted = []
                wantedTypes = []
                return
            }
            wanted = columns.map { column in table.columns.firstIndex(of: column.mnemonic) }
            for (index, mnemonic) in table.columns.enumerated() where !wanted.contains(index) {
                throw refuse(line, "table '\(name)' has no '\(mnemonic)' column")
            }
            wantedTypes = columns.enumerated().compactMap { wanted[$0.offset] == nil ? nil : Array($0.element.type.utf8) }
            if table.givesTicks { tickTables += 1 }
            pendingTicks = []
            rateDeclared = false
            lastTimestamp = nil
        }

        /// A whole number of nanoseconds in a column, checked against physics: 0 to 10¹⁸ ns
        /// (31 years).
        func nanoseconds(_ slot: Int, _ label: String, line: Int) throws(TraceError) -> Int64 {
            guard let text = values[slot] else { throw refuse(line, "a row without its \(label)") }
            guard let value = Int64(text), value >= 0, value <= 1_000_000_000_000_000_000 else {
                throw refuse(line, "\(label) '\(text.printable())' is not a time in whole ns")
            }
            return value
        }

        mutating func endRow(line: Int, _ handle: (TraceEvent, Int) throws(TraceError) -> Void) throws(TraceError) {
            rowDepth = nil
            guard let table else { return }
            switch table {
            case .hitches:
                let duration = try nanoseconds(1, "duration", line: line)
                _ = try nanoseconds(0, "start", line: line)
                try Self.tally(&hitchDurations, duration, line: line, file: file)
                hitchCount += 1
                hitchTotal.add(duration)
                if hitchLine == 0 { hitchLine = line }
            case .potentialHangs:
                let duration = try nanoseconds(1, "duration", line: line)
                _ = try nanoseconds(0, "start", line: line)
                try Self.tally(&hangDurations, duration, line: line, file: file)
                hangCount += 1
                hangLongest = max(hangLongest, duration)
                if hangLine == 0 { hangLine = line }
                let type = (values[2] ?? "(no type)").printable()
                if let index = hangTypes.firstIndex(where: { $0.0 == type }) {
                    hangTypes[index].1 += 1
                } else if hangTypes.count < 16 {
                    hangTypes.append((type, 1))
                }
            case .vsyncs:
                let time = try nanoseconds(0, "timestamp", line: line)
                if let (previous, previousLine) = previousVsync {
                    guard time > previous else { throw refuse(line, "vsync at \(time) ns is not after the previous one at \(previous) ns") }
                    try handle(.tick(FrameTick(timestamp: Double(previous) / 1e9, targetTimestamp: Double(time) / 1e9)), previousLine)
                    lastVsyncInterval = time - previous
                }
                previousVsync = (time, line)
            case .surfaceSwaps, .displayedSurfaces, .renders:
                let time = try nanoseconds(0, table == .surfaceSwaps ? "timestamp" : "start", line: line)
                if let lastTimestamp, time <= lastTimestamp {
                    throw refuse(line, "\(time) ns is not after the previous row's \(lastTimestamp) ns")
                }
                lastTimestamp = time
                if rateDeclared {
                    try handle(.tick(FrameTick(timestamp: Double(time) / 1e9, targetTimestamp: nil)), line)
                } else {
                    pendingTicks.append((time, line))
                    if pendingTicks.count >= XctraceReader.rateSampleRows { try flushDisplayTable(handle) }
                }
            }
        }

        static func tally(_ durations: inout [Int64: Int], _ duration: Int64, line: Int, file: String) throws(TraceError) {
            guard durations.count < XctraceReader.maximumDurations || durations[duration] != nil else {
                throw TraceError(kind: .data, file: file, line: line, message: "more than \(XctraceReader.maximumDurations) distinct durations")
            }
            durations[duration, default: 0] += 1
        }

        /// Declares a display table's refresh rate from the shortest interval between its
        /// first rows, snapped to a common rate, then hands on the rows held back.
        mutating func flushDisplayTable(_ handle: (TraceEvent, Int) throws(TraceError) -> Void) throws(TraceError) {
            if let (time, line) = previousVsync, let interval = lastVsyncInterval {
                // The last vsync has no successor: its interval is taken as the one before.
                previousVsync = nil
                lastVsyncInterval = nil
                try handle(.tick(FrameTick(timestamp: Double(time) / 1e9, targetTimestamp: Double(time + interval) / 1e9)), line)
            }
            guard !rateDeclared, let first = pendingTicks.first else { return }
            var shortest = Int64.max
            for (a, b) in zip(pendingTicks, pendingTicks.dropFirst()) where b.0 - a.0 >= 1_000_000 {
                shortest = min(shortest, b.0 - a.0)
            }
            if shortest != Int64.max, shortest <= 1_000_000_000 {
                try handle(.refreshRate(1 / RefreshRateInference.snapped(interval: Double(shortest) / 1e9)), first.1)
            }
            rateDeclared = true
            for (time, line) in pendingTicks {
                try handle(.tick(FrameTick(timestamp: Double(time) / 1e9, targetTimestamp: nil)), line)
            }
            pendingTicks = []
        }

        mutating func finish(note: (String) -> Void, _ handle: (TraceEvent, Int) throws(TraceError) -> Void) throws(TraceError) {
            try flushDisplayTable(handle)
            guard depth == 0 else { throw refuse(nil, "the document ends inside an element (a cut-off export?)") }
            let read = tablesSeen.filter { Table(rawValue: $0) != nil }
            guard !read.isEmpty else {
                let names = tablesSeen.isEmpty ? "no <schema>" : "tables \(tablesSeen.map { "'\($0)'" }.joined(separator: ", "))"
                throw refuse(nil, "has \(names); Framescope reads the xctrace tables \(Table.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            if !skippedTables.isEmpty {
                note("skipped the tables Framescope does not read: \(skippedTables.joined(separator: ", "))")
            }
            let asFrames = tickTables == 0
            if !asFrames, hitchCount + hangCount > 0 {
                note("the hitch and hang tables are shown as Instruments' figures only: the display table gives the frames")
            }
            if hitchCount > 0 || read.contains(Table.hitches.rawValue) {
                try handle(.toolFigure(ToolFigure(tool: XctraceReader.tool, label: "Hitches", value: Double(hitchCount), unit: "hitches", metrics: [.dropEvents])), hitchLine)
                try handle(.toolFigure(ToolFigure(tool: XctraceReader.tool, label: "Hitch time", value: hitchTotal.seconds * 1000, unit: "ms", metrics: [.hitchTime])), hitchLine)
                if asFrames {
                    for (duration, count) in hitchDurations.sorted(by: { $0.key < $1.key }) {
                        try handle(.hitches(lateness: Double(duration) / 1e9, count: count), hitchLine)
                    }
                }
            }
            if hangCount > 0 || read.contains(Table.potentialHangs.rawValue) {
                try handle(.toolFigure(ToolFigure(tool: XctraceReader.tool, label: "Potential hangs", value: Double(hangCount), unit: "rows", metrics: [.hangs])), hangLine)
                for (type, count) in hangTypes {
                    try handle(.toolFigure(ToolFigure(tool: XctraceReader.tool, label: type, value: Double(count), unit: "rows")), hangLine)
                }
                try handle(.toolFigure(ToolFigure(tool: XctraceReader.tool, label: "Longest potential hang", value: Double(hangLongest) / 1e6, unit: "ms", metrics: [.frameDurationMax])), hangLine)
                if asFrames {
                    for (duration, count) in hangDurations.sorted(by: { $0.key < $1.key }) where duration > 0 {
                        try handle(.frames(duration: Double(duration) / 1e9, count: count), hangLine)
                    }
                }
            }
        }
    }
}
