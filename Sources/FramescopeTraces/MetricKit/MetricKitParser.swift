import FramescopeJSON

/// Reads MetricKit payload JSON as a stream: one payload object (`MXMetricPayload` or
/// `MXDiagnosticPayload` as `jsonRepresentation()` writes it) or a list of them, handing
/// each payload over as soon as it is read (``MetricKitPayload``).
///
/// Call-stack trees and other large values are skipped without being held, at any depth:
/// only what is read has a depth limit (a hang's tree, ``maximumCallStackDepth`` frames),
/// so a crash diagnostic's tree 300 frames deep, which nothing reads, costs the payload
/// nothing. A value that is present but unreadable or impossible (a hang of "20 parsecs", a hitch ratio above
/// 1000 ms per s) is skipped and recorded in ``MetricKitPayload/issues`` with its path, so
/// that the rest of the payload still counts; JSON that is not well formed is a
/// ``TraceError``.
///
/// ```swift
/// var source = try FileByteSource(path: "payload.json")
/// try MetricKitParser(file: "payload.json").read(from: &source) { payload in … }
/// ```
public struct MetricKitParser: Sendable {
    /// The path or name used in error messages.
    public let file: String

    /// Most hang diagnostics kept per payload; more are counted in an issue.
    public static let maximumHangDiagnostics = 100_000
    /// Most hang diagnostics of one payload whose call-stack trees are read; the others'
    /// durations are read alone.
    public static let maximumHangCallStacks = 32
    /// Most histogram buckets kept per payload.
    public static let maximumBuckets = 1_000
    /// Most kinds of other diagnostics counted per payload.
    public static let maximumDiagnosticKinds = 64
    /// Most issues kept per payload.
    public static let maximumIssues = 100

    /// A parser whose errors name `file`.
    public init(file: String) {
        self.file = file
    }

    /// Reads every payload in `source`, in order.
    /// - Parameters:
    ///   - progress: Called with the bytes read so far, after each payload.
    ///   - handle: Called with each payload and the line it starts on.
    /// - Throws: ``TraceError`` when the input is not JSON, or is neither a payload object
    ///   nor a list of them.
    public func read<Source: ByteSource>(
        from source: inout Source,
        progress: (Int) -> Void = { _ in },
        _ handle: (MetricKitPayload, _ line: Int) throws(TraceError) -> Void
    ) throws(TraceError) {
        let file = file
        var lexer = JSONStreamLexer<TraceError> { message, line in TraceError(kind: .data, file: file, line: line, message: message) }
        defer { lexer.deallocate() }
        try lexer.skipByteOrderMark(&source)
        try lexer.skipWhitespace(&source)
        if try lexer.consumeIf(UInt8(ascii: "["), &source) {
            if try !lexer.consumeIf(UInt8(ascii: "]"), &source) {
                var index = 0
                repeat {
                    let line = lexer.line
                    let payload = try readPayload(&lexer, &source, path: "[\(index)].")
                    try handle(payload, line)
                    progress(lexer.totalRead)
                    index += 1
                } while try lexer.separator(closing: UInt8(ascii: "]"), &source)
            }
        } else {
            let line = lexer.line
            let payload = try readPayload(&lexer, &source, path: "")
            try handle(payload, line)
            progress(lexer.totalRead)
        }
        guard try lexer.atEnd(&source) else { throw lexer.error("unexpected content after the MetricKit payload") }
    }

    private func readPayload<Source: ByteSource>(
        _ lexer: inout JSONStreamLexer<TraceError>, _ source: inout Source, path: String
    ) throws(TraceError) -> MetricKitPayload {
        var payload = MetricKitPayload()
        try lexer.skipWhitespace(&source)
        guard try lexer.peekByte(&source) == UInt8(ascii: "{") else {
            throw lexer.error("expected a MetricKit payload object (the JSON of MXMetricPayload or MXDiagnosticPayload), or a list of them")
        }
        var metaVersion: String?
        var latestVersion: String?
        try forEachMember(&lexer, &source) { (key, lexer, source) throws(TraceError) in
            let field = path + key
            switch key {
            case "timeStampBegin", "timeStampEnd":
                try lexer.skipWhitespace(&source)
                let line = lexer.line
                let isNull = try lexer.peekByte(&source) == UInt8(ascii: "n")
                guard let text = try optionalString(&lexer, &source, &payload, field) else {
                    if !isNull { periodIssue(&payload, field, line, "is not a string") }
                    return
                }
                guard let time = MetricKitMeasurement.unixTime(text) else {
                    let message = "'\(text.printable())' is not a time like 2020-10-10 19:35:24 +0000"
                    periodIssue(&payload, field, lexer.line, message)
                    return issue(&payload, field, lexer.line, message)
                }
                if key == "timeStampBegin" { payload.begin = time } else { payload.end = time }
            case "latestApplicationVersion":
                latestVersion = try optionalString(&lexer, &source, &payload, field)
            case "metaData":
                try readMetaData(&lexer, &source, path: field, into: &payload)
                metaVersion = payload.appVersion
            case "animationMetrics":
                try readAnimation(&lexer, &source, path: field, into: &payload)
            case "applicationResponsivenessMetrics":
                try readResponsiveness(&lexer, &source, path: field, into: &payload)
            case _ where key.hasSuffix("Diagnostics"):
                try readDiagnostics(&lexer, &source, kind: key, path: field, into: &payload)
            default:
                try lexer.skipValue(&source, maximumDepth: .max)
            }
        }
        payload.appVersion = metaVersion ?? payload.appVersion ?? latestVersion
        if let begin = payload.begin, let end = payload.end, end < begin {
            issue(&payload, path + "timeStampEnd", lexer.line, "ends before timeStampBegin; the period is left out")
            periodIssue(&payload, path + "timeStampEnd", lexer.line, "ends before timeStampBegin")
            payload.begin = nil
            payload.end = nil
        }
        return payload
    }

    /// `metaData` and `diagnosticMetaData`: who sent the payload. A field seen before is kept.
    private func readMetaData<Source: ByteSource>(
        _ lexer: inout JSONStreamLexer<TraceError>, _ source: inout Source, path: String, into payload: inout MetricKitPayload,
        hang: ((String, Int) -> Void)? = nil
    ) throws(TraceError) {
        try forEachMember(&lexer, &source) { (key, lexer, source) throws(TraceError) in
            let field = path + "." + key
            switch key {
            case "appVersion": set(&payload.appVersion, try optionalString(&lexer, &source, &payload, field))
            case "appBuildVersion": set(&payload.appBuildVersion, try optionalString(&lexer, &source, &payload, field))
            case "osVersion": set(&payload.osVersion, try optionalString(&lexer, &source, &payload, field))
            case "deviceType": set(&payload.deviceType, try optionalString(&lexer, &source, &payload, field))
            case "bundleIdentifier": set(&payload.bundleIdentifier, try optionalString(&lexer, &source, &payload, field))
            case "hangDuration" where hang != nil:
                let line = lexer.line
                if let text = try optionalString(&lexer, &source, &payload, field) { hang?(text, line) }
            default: try lexer.skipValue(&source, maximumDepth: .max)
            }
        }
    }

    private func set(_ value: inout String?, _ new: String?) {
        guard value == nil || value == "", let new, !new.isEmpty else { return }
        value = new
    }

    /// `animationMetrics.scrollHitchTimeRatio`.
    private func readAnimation<Source: ByteSource>(
        _ lexer: inout JSONStreamLexer<TraceError>, _ source: inout Source, path: String, into payload: inout MetricKitPayload
    ) throws(TraceError) {
        try forEachMember(&lexer, &source) { (key, lexer, source) throws(TraceError) in
            guard key == "scrollHitchTimeRatio" else { return try lexer.skipValue(&source, maximumDepth: .max) }
            let line = lexer.line
            guard let text = try optionalString(&lexer, &source, &payload, path + "." + key) else { return }
            guard let ratio = MetricKitMeasurement.millisecondsPerSecond(text) else {
                return issue(&payload, path + "." + key, line, "'\(text.printable())' is not a ratio like '12 ms per s'")
            }
            guard ratio <= 1000 else {
                return issue(&payload, path + "." + key, line, "\(ratio) ms per s is more than the 1000 ms a second holds")
            }
            payload.scrollHitchTimeRatio = ratio
        }
    }

    /// `applicationResponsivenessMetrics.histogrammedAppHangTime.histogramValue`.
    private func readResponsiveness<Source: ByteSource>(
        _ lexer: inout JSONStreamLexer<TraceError>, _ source: inout Source, path: String, into payload: inout MetricKitPayload
    ) throws(TraceError) {
        try forEachMember(&lexer, &source) { (key, lexer, source) throws(TraceError) in
            guard key == "histogrammedAppHangTime" || key == "histogrammedApplicationHangTime" else { return try lexer.skipValue(&source, maximumDepth: .max) }
            let histogramPath = path + "." + key
            try forEachMember(&lexer, &source) { (key, lexer, source) throws(TraceError) in
                guard key == "histogramValue" else { return try lexer.skipValue(&source, maximumDepth: .max) }
                try forEachMember(&lexer, &source) { (bucketKey, lexer, source) throws(TraceError) in
                    let bucketPath = histogramPath + ".histogramValue." + bucketKey.printable()
                    let line = lexer.line
                    var start: String?
                    var end: String?
                    var count: Double?
                    try forEachMember(&lexer, &source) { (key, lexer, source) throws(TraceError) in
                        switch key {
                        case "bucketStart": start = try optionalString(&lexer, &source, &payload, bucketPath + ".bucketStart")
                        case "bucketEnd": end = try optionalString(&lexer, &source, &payload, bucketPath + ".bucketEnd")
                        case "bucketCount":
                            try lexer.skipWhitespace(&source)
                            if try lexer.peekByte(&source) == UInt8(ascii: "\"") {
                                count = Double(try lexer.string(&source))
                            } else if try !lexer.null(&source) {
                                count = try lexer.number(&source, parse: parseDouble)
                            }
                        default: try lexer.skipValue(&source, maximumDepth: .max)
                        }
                    }
                    guard let count, count >= 0, count <= 1e12, count == count.rounded() else {
                        return issue(&payload, bucketPath + ".bucketCount", line, "is not a whole number of hangs")
                    }
                    guard let startText = start, let endText = end,
                          let lower = MetricKitMeasurement.seconds(startText), let upper = MetricKitMeasurement.seconds(endText),
                          lower <= upper, upper <= MetricKitMeasurement.maximumDuration else {
                        return issue(&payload, bucketPath, line, "bucketStart and bucketEnd are not durations from 0 to a day, the start first")
                    }
                    guard payload.hangTimeHistogram.count < Self.maximumBuckets else {
                        return issue(&payload, bucketPath, line, "more than \(Self.maximumBuckets) buckets; the rest are left out")
                    }
                    payload.hangTimeHistogram.append(MetricKitBucket(start: lower, end: upper, count: Int(count)))
                }
            }
        }
    }

    /// A list of diagnostics: hangs are read for their durations, other kinds counted;
    /// each one's `diagnosticMetaData` says who sent it.
    private func readDiagnostics<Source: ByteSource>(
        _ lexer: inout JSONStreamLexer<TraceError>, _ source: inout Source, kind: String, path: String, into payload: inout MetricKitPayload
    ) throws(TraceError) {
        try lexer.skipWhitespace(&source)
        guard try lexer.peekByte(&source) == UInt8(ascii: "[") else { return try lexer.skipValue(&source, maximumDepth: .max) }
        try lexer.expect(UInt8(ascii: "["), &source, "'['")
        if try lexer.consumeIf(UInt8(ascii: "]"), &source) { return }
        let isHang = kind == "hangDiagnostics"
        var index = 0
        var count = 0
        repeat {
            let elementPath = "\(path)[\(index)]"
            index += 1
            try lexer.skipWhitespace(&source)
            guard try lexer.peekByte(&source) == UInt8(ascii: "{") else { try lexer.skipValue(&source, maximumDepth: .max); continue }
            count += 1
            var duration: (String, Int)?
            var callStack: [MetricKitCallStackFrame]?
            try forEachMember(&lexer, &source) { (key, lexer, source) throws(TraceError) in
                if key == "callStackTree", isHang, payload.hangCallStacks.count < Self.maximumHangCallStacks {
                    callStack = try readCallStackTree(&lexer, &source, path: elementPath + ".callStackTree", into: &payload)
                    return
                }
                guard key == "diagnosticMetaData" else { return try lexer.skipValue(&source, maximumDepth: .max) }
                try readMetaData(&lexer, &source, path: elementPath + ".diagnosticMetaData", into: &payload,
                                 hang: isHang ? { duration = ($0, $1) } : nil)
            }
            guard isHang else { continue }
            let field = elementPath + ".diagnosticMetaData.hangDuration"
            guard let (text, line) = duration else {
                issue(&payload, field, lexer.line, "missing; the hang is left out")
                continue
            }
            guard let seconds = MetricKitMeasurement.seconds(text) else {
                issue(&payload, field, line, "'\(text.printable())' is not a duration like '20 sec'")
                continue
            }
            guard seconds > 0, seconds <= MetricKitMeasurement.maximumDuration else {
                issue(&payload, field, line, "\(seconds) s is not a hang a payload of at most a day can hold")
                continue
            }
            guard payload.hangDurations.count < Self.maximumHangDiagnostics else {
                issue(&payload, field, line, "more than \(Self.maximumHangDiagnostics) hang diagnostics; the rest are left out")
                continue
            }
            payload.hangDurations.append(seconds)
            if let callStack, payload.hangCallStacks.count < Self.maximumHangCallStacks {
                payload.hangCallStacks.append(MetricKitHangCallStack(diagnostic: payload.hangDurations.count - 1, roots: callStack))
            }
        } while try lexer.separator(closing: UInt8(ascii: "]"), &source)
        if !isHang, count > 0 {
            if let existing = payload.otherDiagnostics.firstIndex(where: { $0.kind == kind }) {
                payload.otherDiagnostics[existing].count += count
            } else if payload.otherDiagnostics.count < Self.maximumDiagnosticKinds {
                payload.otherDiagnostics.append(MetricKitDiagnosticCount(kind: kind.printable(), count: count))
            }
        }
    }

    /// Records the first problem with the period (``MetricKitPayload/periodIssue``).
    func periodIssue(_ payload: inout MetricKitPayload, _ field: String, _ line: Int, _ message: String) {
        if payload.periodIssue == nil { payload.periodIssue = MetricKitIssue(field: field.printable(), line: line, message: message) }
    }

    func issue(_ payload: inout MetricKitPayload, _ field: String, _ line: Int, _ message: String) {
        guard payload.issues.count < Self.maximumIssues else { return }
        payload.issues.append(MetricKitIssue(field: field.printable(), line: line, message: message))
    }

    /// A string value, or `nil` for `null` or a value of another type (skipped, and an
    /// issue naming `field`).
    func optionalString<Source: ByteSource>(
        _ lexer: inout JSONStreamLexer<TraceError>, _ source: inout Source, _ payload: inout MetricKitPayload, _ field: String
    ) throws(TraceError) -> String? {
        try lexer.skipWhitespace(&source)
        guard try lexer.peekByte(&source) == UInt8(ascii: "\"") else {
            let line = lexer.line
            if try !lexer.null(&source) {
                try lexer.skipValue(&source, maximumDepth: .max)
                issue(&payload, field, line, "is not a string")
            }
            return nil
        }
        return try lexer.string(&source)
    }

    /// Calls `body` with each key of the object that comes next, positioned at its value,
    /// which `body` must consume; a value that is not an object is skipped.
    func forEachMember<Source: ByteSource>(
        _ lexer: inout JSONStreamLexer<TraceError>, _ source: inout Source,
        _ body: (String, inout JSONStreamLexer<TraceError>, inout Source) throws(TraceError) -> Void
    ) throws(TraceError) {
        try lexer.skipWhitespace(&source)
        guard try lexer.peekByte(&source) == UInt8(ascii: "{") else { return try lexer.skipValue(&source, maximumDepth: .max) }
        try lexer.expect(UInt8(ascii: "{"), &source, "'{'")
        if try lexer.consumeIf(UInt8(ascii: "}"), &source) { return }
        repeat {
            let key = try lexer.string(&source)
            try lexer.expect(UInt8(ascii: ":"), &source, "':' after a key")
            try body(key, &lexer, &source)
        } while try lexer.separator(closing: UInt8(ascii: "}"), &source)
    }

    /// Whether `prefix` is MetricKit's JSON: an object, or a list of objects, whose first
    /// key is one of a payload's (`timeStampBegin`, `metaData`, a `…Metrics` or
    /// `…Diagnostics` key, …).
    static func matches(prefix: some Collection<UInt8>) -> Bool {
        var bytes = Array(prefix.prefix(4096))[...]
        func skipSpace() { while let first = bytes.first, JSONText.isWhitespace(first) || first == 0xEF || first == 0xBB || first == 0xBF { bytes.removeFirst() } }
        skipSpace()
        if bytes.first == UInt8(ascii: "[") { bytes.removeFirst(); skipSpace() }
        guard bytes.first == UInt8(ascii: "{") else { return false }
        bytes.removeFirst()
        skipSpace()
        guard bytes.first == UInt8(ascii: "\"") else { return false }
        bytes.removeFirst()
        guard let close = bytes.firstIndex(of: UInt8(ascii: "\"")) else { return false }
        let key = String(decoding: bytes[..<close], as: UTF8.self)
        return ["timeStampBegin", "timeStampEnd", "metaData", "latestApplicationVersion", "includesMultipleApplicationVersions"].contains(key)
            || key.hasSuffix("Metrics") || key.hasSuffix("Diagnostics")
    }
}
