/// The physics every report obeys, checked before anything adds a report from outside
/// (a device's event, a stored rollup row, a file): each count is bounded by the
/// report's own duration and frames, so no later sum or product of checked values can
/// overflow.
extension FrameReport {
    /// The fastest display refresh a report may describe, in Hz. Every measured frame
    /// and every dropped frame lasts at least one refresh, so a report holds at most
    /// `duration × 1000` of each.
    public static let maximumRefreshRate = 1000

    /// The largest window-FPS key, in hundredths of FPS (1,000 FPS): a window cannot
    /// show more frames per second than the display refreshes.
    public static let maximumWindowFPSKey = 100_000

    /// The most entries a single visit's ``windowFPS`` or ``refreshRates`` may hold.
    ///
    /// One visit uses one window length, so its window FPS values are multiples of
    /// `1 / windowLength` up to 1,000 FPS (at most 1,001 of them), and its refresh rates
    /// are whole Hz up to 1,000. Merged reports (rollups) may hold more, within the key
    /// ranges.
    public static let maximumTallyEntriesPerVisit = 1024

    /// The shortest time one frame or dropped frame can take, in nanoseconds: one refresh
    /// at ``maximumRefreshRate`` less the analyzer's rounding allowance
    /// (``FrameAnalyzer/refreshIntervalRange`` starts at 999,900 ns).
    static let shortestFrameNanoseconds: UInt64 = 999_000

    /// Whether `count` frames of at least ``shortestFrameNanoseconds`` fit into `total`:
    /// `count × 999,000 ≤ total`, computed exactly in 128 bits.
    static func fits(_ count: Int, into total: NanosecondTotal) -> Bool {
        guard count > 0 else { return true }
        let (high, low) = UInt64(count).multipliedFullWidth(by: shortestFrameNanoseconds)
        return NanosecondTotal(high: high, low: low) <= total
    }

    /// The first field that contradicts another or breaks physics, with what is wrong,
    /// or `nil` when the report is consistent. Reports made by ``FrameAnalyzer`` are
    /// always consistent.
    ///
    /// Every comparison is made without arithmetic that can trap: bounds are checked
    /// one at a time before any sum, and products use overflow-reporting operations.
    ///
    /// - Complexity: O(*b* + *t*) for *b* histogram buckets and *t* tally entries.
    public var inconsistency: (field: String, message: String)? {
        if !(stabilityBand > 0 && stabilityBand < 1) { return ("histograms", "stabilityBand must lie between 0 and 1, got \(stabilityBand)") }
        for (field, value) in [("frames", frames), ("firstFrames", firstFrames), ("droppedFrames", droppedFrames), ("dropEvents", dropEvents),
                               ("maxDroppedFrames", maxDroppedFrames), ("hangs", hangs), ("slowFrames", slowFrames),
                               ("frozenFrames", frozenFrames), ("rejectedTicks", rejectedTicks)] where value < 0 {
            return (field, "\(field) must not be negative, got \(value)")
        }
        // Frames and dropped frames each last at least one refresh (1 ms at 1000 Hz). The
        // bounds are exact integer products and hold for sums whenever they hold for each
        // part, so a merge of checked reports (a rollup row) passes the same check.
        if !Self.fits(frames, into: durationNanoseconds) {
            return ("frames", "frames (\(frames)) is more than \(Self.maximumRefreshRate) per second of duration (\(duration) s)")
        }
        if !Self.fits(droppedFrames, into: durationNanoseconds) {
            return ("droppedFrames", "droppedFrames (\(droppedFrames)) is more than \(Self.maximumRefreshRate) per second of duration (\(duration) s)")
        }
        if !Self.fits(firstFrames, into: firstDurationNanoseconds) {
            return ("firstFrames", "firstFrames (\(firstFrames)) is more than \(Self.maximumRefreshRate) per second of firstDuration")
        }
        if frameDurations.count != frames { return ("frames", "frames is \(frames) but the frame-duration histogram holds \(frameDurations.count)") }
        for (field, value) in [("dropEvents", dropEvents), ("slowFrames", slowFrames), ("frozenFrames", frozenFrames), ("hangs", hangs)] where value > frames {
            return (field, "\(field) (\(value)) exceeds frames (\(frames))")
        }
        if slowFrames > frames - frozenFrames { return ("slowFrames", "slowFrames + frozenFrames exceeds frames (\(frames))") }
        if dropEvents > droppedFrames { return ("dropEvents", "dropEvents (\(dropEvents)) exceeds droppedFrames (\(droppedFrames))") }
        if (dropEvents == 0) != (droppedFrames == 0) { return ("droppedFrames", "droppedFrames (\(droppedFrames)) and dropEvents (\(dropEvents)) must both be zero or both positive") }
        if maxDroppedFrames > droppedFrames || (dropEvents > 0 && maxDroppedFrames < 1) {
            return ("maxDroppedFrames", "maxDroppedFrames (\(maxDroppedFrames)) does not fit droppedFrames (\(droppedFrames))")
        }
        if dropEvents > 0 {
            let (product, overflow) = dropEvents.multipliedReportingOverflow(by: maxDroppedFrames)
            if !overflow && droppedFrames > product { return ("maxDroppedFrames", "droppedFrames (\(droppedFrames)) exceeds dropEvents × maxDroppedFrames") }
        }
        if hitchTimeNanoseconds > durationNanoseconds { return ("hitchTime", "hitchTime exceeds duration") }
        if hangTimeNanoseconds > durationNanoseconds { return ("hangTime", "hangTime exceeds duration") }
        if (hangs == 0) != hangTimeNanoseconds.isZero { return ("hangTime", "hangTime must be positive exactly when hangs is") }
        if frames == 0 && !durationNanoseconds.isZero { return ("duration", "duration must be 0 without frames") }
        if frames > 0 && durationNanoseconds.isZero { return ("duration", "duration must be positive with frames") }
        if (firstFrames == 0) != firstDurationNanoseconds.isZero { return ("firstDuration", "firstDuration must be positive exactly when firstFrames is") }
        if let entry = refreshRates.entries.first(where: { $0.key < 1 || $0.key > Self.maximumRefreshRate }) {
            return ("refreshRates", "refresh rate \(entry.key) Hz lies outside 1–\(Self.maximumRefreshRate) Hz")
        }
        if refreshRates.total != frames { return ("refreshRates", "refresh rates add up to \(refreshRates.total) frames, not frames = \(frames)") }
        if let entry = windowFPS.entries.first(where: { $0.key < 0 || $0.key > Self.maximumWindowFPSKey }) {
            return ("windowFPS", "window FPS \(Double(entry.key) / 100) lies outside 0–\(Self.maximumWindowFPSKey / 100) FPS")
        }
        switch (minFrameDuration, maxFrameDuration) {
        case (nil, nil):
            if frames > 0 { return ("frameDuration", "frameDuration.min and .max are required when there are frames") }
        case let (low?, high?):
            if frames == 0 { return ("frameDuration", "frameDuration.min and .max must be null without frames") }
            if !(low.isFinite && high.isFinite && low > 0 && low <= high) { return ("frameDuration", "frameDuration.min (\(low)) and .max (\(high)) must be positive with min ≤ max") }
            // Each frame's duration is summed in whole nanoseconds, and the products below are
            // doubles: both allowances scale with the sums, so merged reports pass as their parts do.
            let allowance = Double(frames) * 1e-9 + duration * 1e-9
            if Double(frames) * low > duration + allowance || high > duration + allowance {
                return ("frameDuration", "frameDuration.min/.max do not fit duration (\(duration) s over \(frames) frames)")
            }
        default:
            return ("frameDuration", "frameDuration.min and .max must both be given or both be null")
        }
        return nil
    }
}
