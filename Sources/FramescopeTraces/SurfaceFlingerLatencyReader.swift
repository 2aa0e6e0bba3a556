import FramescopeCore

/// Reads Android's `dumpsys SurfaceFlinger --latency <layer>` output as a stream.
///
/// ```
/// 16666667
/// 96070354631117	96070372447472	96070354631117
/// ```
///
/// The first line is the display's refresh period in nanoseconds. Each further line is one
/// frame of the layer's history (at most the last 127): desired present time, actual
/// present time and frame-ready time, nanoseconds of `CLOCK_MONOTONIC`, separated by tabs or
/// spaces. Framescope makes one tick per frame at its **actual present time** (when it
/// reached the screen) and declares the period as the refresh rate, so a gap of more than
/// one period between two presents is a drop, as on iOS.
///
/// Rows without data are skipped and counted (``note``): `0 0 0` (the history is not full
/// yet) and an actual present time of `INT64_MAX` (a frame whose present fence has not
/// signalled). Rows must present in order; anything else is an error naming the line. A
/// dump without a single presented frame (all pending, all `0 0 0`, or the period alone)
/// is an error too, as any recording with no frame is.
struct SurfaceFlingerLatencyReader {
    let file: String

    /// The longest line accepted, in bytes (three 19-digit numbers and separators fit in 64).
    static let maximumLineBytes = 256
    /// The "pending fence" value `dumpsys` prints for a frame not yet presented.
    static let pendingFence = Int64.max

    func read<Source: ByteSource>(
        from source: inout Source,
        progress: (Int) -> Void,
        note: (String) -> Void,
        _ handle: (TraceEvent, _ line: Int) throws(TraceError) -> Void
    ) throws(TraceError) {
        var state = State()
        let lines = LineSplitter(file: file, maximumLineBytes: Self.maximumLineBytes, formatName: "SurfaceFlinger latency output")
        try lines.forEachLineSlice(of: &source, progress: progress) { (line, number) throws(TraceError) in
            try state.take(line, number, file: file, handle)
        }
        guard state.period != nil else {
            throw TraceError(kind: .data, file: file, line: 1, message: "is empty; expected the refresh period in nanoseconds on the first line")
        }
        // No frame reached the screen: like any recording without a frame, this is not a
        // usable trace (exit 65), not a report of nothing.
        guard state.presentedRows > 0 else {
            var skipped: [String] = []
            if state.pendingRows > 0 {
                skipped.append("\(state.pendingRows) frame\(state.pendingRows == 1 ? "" : "s") not yet presented (pending fence)")
            }
            if state.emptyRows > 0 {
                skipped.append("\(state.emptyRows) row\(state.emptyRows == 1 ? "" : "s") of 0 0 0")
            }
            let what = skipped.isEmpty ? "only the refresh period" : skipped.joined(separator: " and ")
            throw TraceError(kind: .data, file: file, message: """
                has no presented frame (\(what)); dump again while the layer draws: \
                adb shell dumpsys SurfaceFlinger --latency <layer>
                """)
        }
        if state.emptyRows > 0 {
            note("skipped \(state.emptyRows) row\(state.emptyRows == 1 ? "" : "s") of 0 0 0 (no frame recorded yet)")
        }
        if state.pendingRows > 0 {
            note("skipped \(state.pendingRows) frame\(state.pendingRows == 1 ? "" : "s") not yet presented (pending fence)")
        }
    }

    /// What the lines so far have said.
    private struct State {
        var period: Int64?
        var lastPresent: Int64?
        var emptyRows = 0
        var pendingRows = 0
        /// Frames with an actual present time, each one tick.
        var presentedRows = 0

        mutating func take(_ bytes: UnsafeRawBufferPointer, _ number: Int, file: String,
                           _ handle: (TraceEvent, _ line: Int) throws(TraceError) -> Void) throws(TraceError) {
            let fields = Self.fields(bytes)
            func refuse(_ message: String) -> TraceError {
                TraceError(kind: .data, file: file, line: number, message: message)
            }
            if fields.isEmpty { return }
            guard period != nil else {
                guard fields.count == 1, let value = fields[0], value > 0 else {
                    throw refuse("expected the refresh period in nanoseconds alone on the first line")
                }
                // Physics first: 1 Hz to 1,000 Hz.
                guard (1_000_000...1_000_000_000).contains(value) else {
                    throw refuse("refresh period \(value) ns is not a display's (1 ms to 1 s)")
                }
                self.period = value
                try handle(.refreshRate(1e9 / Double(value)), number)
                return
            }
            guard fields.count == 3, let desired = fields[0], let actual = fields[1], let ready = fields[2] else {
                throw refuse("expected three whole numbers (desired present, actual present, frame ready, in ns)")
            }
            if desired == 0, actual == 0, ready == 0 {
                emptyRows += 1
                return
            }
            if actual == SurfaceFlingerLatencyReader.pendingFence {
                pendingRows += 1
                return
            }
            guard actual > 0 else { throw refuse("actual present time \(actual) is not a time") }
            if let lastPresent, actual <= lastPresent {
                throw refuse("actual present time \(actual) is not after the previous frame's \(lastPresent)")
            }
            lastPresent = actual
            presentedRows += 1
            try handle(.tick(FrameTick(timestamp: Double(actual) / 1e9, targetTimestamp: nil)), number)
        }

        /// The whitespace-separated fields of a line: each a non-negative whole number
        /// within `Int64`, or nil when it is not one. At most four are kept (a row has
        /// three; a fourth says there are too many), so no array grows per line.
        static func fields(_ bytes: UnsafeRawBufferPointer) -> Fields {
            var fields = Fields()
            let count = bytes.count
            var index = 0
            while index < count {
                let byte = bytes[index]
                if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r") {
                    index += 1
                    continue
                }
                // One field: its digits, without a check while 18 of them cannot overflow.
                var value: Int64 = 0
                var valid = true
                var digits = 0
                while index < count {
                    let byte = bytes[index]
                    if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r") { break }
                    let digit = byte &- UInt8(ascii: "0")
                    if digit < 10 {
                        if digits < 18 {
                            value = value &* 10 &+ Int64(digit)
                        } else {
                            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
                            let (sum, overflowSum) = times.addingReportingOverflow(Int64(digit))
                            if overflow || overflowSum { valid = false } else { value = sum }
                        }
                        digits += 1
                    } else {
                        // A letter or a sign: the field is not a number.
                        valid = false
                    }
                    index += 1
                }
                fields.append(valid ? value : nil)
            }
            return fields
        }

        /// Up to four fields of a line, without an allocation.
        struct Fields {
            private var values: (Int64?, Int64?, Int64?, Int64?) = (nil, nil, nil, nil)
            /// How many fields the line has (counting past four).
            private(set) var count = 0
            var isEmpty: Bool { count == 0 }

            mutating func append(_ value: Int64?) {
                switch count {
                case 0: values.0 = value
                case 1: values.1 = value
                case 2: values.2 = value
                case 3: values.3 = value
                default: break
                }
                count += 1
            }

            subscript(index: Int) -> Int64? {
                switch index {
                case 0: values.0
                case 1: values.1
                case 2: values.2
                default: values.3
                }
            }
        }
    }

    /// Whether `prefix` (the first bytes of a file) looks like this format: a first line
    /// that is one whole number alone. No CSV trace starts so (its first line names its
    /// columns), so the rows after it are judged by the reader, with errors naming them.
    static func matches(prefix: some Collection<UInt8>) -> Bool {
        guard let newline = prefix.firstIndex(of: UInt8(ascii: "\n")) else { return false }
        let line = Array(prefix[..<newline])
        let period = line.withUnsafeBytes { State.fields($0) }
        return period.count == 1 && period[0] != nil
    }
}
