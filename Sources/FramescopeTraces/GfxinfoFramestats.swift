/// The `---PROFILEDATA---` blocks of `dumpsys gfxinfo <package> framestats`: one CSV row
/// per recent frame (at most 120 per window), nanoseconds of `CLOCK_MONOTONIC`, columns
/// named by a header that changes between Android versions (docs/traces.md).
///
/// ```
/// ---PROFILEDATA---
/// Flags,IntendedVsync,Vsync,…,FrameCompleted,…,FrameDeadline,FrameInterval,…,
/// 0,10921286541,10921286541,…,10935441697,…,10937953207,16666666,…,
/// ---PROFILEDATA---
/// ```
///
/// A frame's duration is `FrameCompleted − IntendedVsync`, Android's own "total frame
/// time", the quantity of the summary's histogram. Rows whose `Flags` are not 0 (a window
/// layout change, an animation on the render thread, a surface canvas or a skipped frame)
/// are not frames by HWUI's rules and are counted, not read.
struct GfxinfoFramestats {
    /// The frames read: durations in ns, and whether each finished after its deadline
    /// (`nil` without a `FrameDeadline` column).
    var frames: [(nanoseconds: Int64, late: Bool?)] = []
    /// `FrameInterval` of the first frame that gives one, in ns.
    var frameInterval: Int64?
    /// Rows skipped for their flags.
    var flagged = 0
    /// The line of the first row read.
    var firstLine: Int?
    /// Whether a block is open, and its columns once its header is read.
    private var open = false
    private var columns: Columns?

    /// Most rows kept per process: far more than the 120 per window `dumpsys` prints.
    static let maximumRows = 1_000_000

    private struct Columns {
        var count: Int
        var flags: Int
        var intendedVsync: Int
        var frameCompleted: Int
        var frameDeadline: Int?
        var frameInterval: Int?
    }

    /// Whether `text` is the fence that opens or closes a block.
    static func isFence(_ text: Substring) -> Bool { text == "---PROFILEDATA---" }

    /// Whether a block is open: its lines belong here.
    var isOpen: Bool { open }

    /// Opens or closes a block at a fence.
    mutating func fence() {
        open.toggle()
        columns = nil
    }

    /// One line inside a block: its header, or a frame.
    /// - Returns: what is wrong with the line, or `nil`.
    mutating func take(_ text: Substring, line: Int) -> String? {
        var fields = text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingWhitespace() }
        // Every line ends with a comma.
        if fields.last?.isEmpty == true { fields.removeLast() }
        if fields.isEmpty { return nil }
        guard let columns else {
            func position(_ name: String) -> Int? { fields.firstIndex { $0 == name } }
            guard let flags = position("Flags"), let intended = position("IntendedVsync"), let completed = position("FrameCompleted") else {
                return "PROFILEDATA header has no Flags, IntendedVsync or FrameCompleted column"
            }
            self.columns = Columns(count: fields.count, flags: flags, intendedVsync: intended, frameCompleted: completed,
                                   frameDeadline: position("FrameDeadline"), frameInterval: position("FrameInterval"))
            return nil
        }
        guard fields.count >= columns.count else {
            return "PROFILEDATA row has \(fields.count) fields; its header has \(columns.count)"
        }
        func value(_ index: Int) -> Int64? { Int64(fields[index]) }
        guard let flags = value(columns.flags), let intended = value(columns.intendedVsync), let completed = value(columns.frameCompleted) else {
            return "PROFILEDATA row: Flags, IntendedVsync and FrameCompleted must be whole numbers of ns"
        }
        if flags != 0 {
            flagged += 1
            return nil
        }
        // Physics first: a frame of 0 to 1,000 s.
        let (duration, overflow) = completed.subtractingReportingOverflow(intended)
        guard !overflow, duration > 0, duration <= 1_000_000_000_000 else {
            return "PROFILEDATA row: FrameCompleted \(completed) is not 0 to 1,000 s after IntendedVsync \(intended)"
        }
        guard frames.count < Self.maximumRows else { return "more than \(Self.maximumRows) PROFILEDATA rows for one process" }
        var late: Bool?
        if let index = columns.frameDeadline, let deadline = value(index), deadline > 0 { late = completed > deadline }
        if frameInterval == nil, let index = columns.frameInterval, let interval = value(index), (1_000_000...1_000_000_000).contains(interval) {
            frameInterval = interval
        }
        frames.append((duration, late))
        if firstLine == nil { firstLine = line }
        return nil
    }
}
