/// Where a backfilled reporter's vsync is (docs/traces.md, "Backfilled frames go by their sequence").
///
/// When the compositor begins a frame and finds vsyncs skipped since the last one it began,
/// Chrome makes a dropped reporter for each skipped `frame_sequence`, marked `BACKFILL`
/// (`CompositorFrameReportingController::CreateReportersForDroppedFrames`,
/// cc/metrics/compositor_frame_reporting_controller.cc). Its `ts` is not a time the display
/// gave: Chrome computes it from the last begun frame (its time plus whole intervals of its
/// length) when it reports the skip, so it need not be its vsync's, and may be another
/// vsync's, where grouping by time would merge the drop into that vsync. Chrome's own
/// dropped-frame counting goes by the vsync's id instead: `FrameSorter`
/// (cc/metrics/frame_sorter.cc) merges every result for one `frame_source` and
/// `frame_sequence` into one frame and takes the frames in sequence order. Framescope does
/// the same.
extension ChromeFrames {
    /// Moves each `BACKFILL` reporter with a `frame_sequence` to its vsync's time: that of
    /// the other reporters of its sequence when there are any; else, in proportion, between
    /// the nearest sequences before and after it that reporters stamped themselves
    /// (sequences advance one a vsync, idle vsyncs included); else, with none on one side,
    /// its own `ts` stands. Sequences count per process and `frame_source`. A `BeginFrame`
    /// whose `frameSeqId` is a backfilled sequence moves with its reporter.
    ///
    /// - Complexity: O(*n* log *n*) for *n* events.
    static func placeBackfills(_ events: inout [Record]) {
        let placed: Flags = [.backfill, .sequenced]
        guard events.contains(where: { $0.flags.isSuperset(of: placed) }) else { return }
        // The vsyncs reporters began at themselves, per stream, in sequence order.
        var stamped: [UInt32: [(sequence: UInt32, time: Double)]] = [:]
        for event in events where event.kind.isReporter && event.flags.contains(.sequenced) && !event.flags.contains(.backfill) {
            stamped[event.stream, default: []].append((event.sequence, event.time))
        }
        for stream in Array(stamped.keys) { stamped[stream]?.sort { ($0.sequence, $0.time) < ($1.sequence, $1.time) } }
        var moved: [UInt32: Double] = [:]
        for index in events.indices where events[index].flags.isSuperset(of: placed) {
            if let vsyncs = stamped[events[index].stream], let time = time(of: events[index].sequence, among: vsyncs) {
                events[index].time = time
            }
            moved[events[index].sequence] = events[index].time
        }
        // Chrome writes a BeginFrame for each backfilled vsync, at the reporter's time: it
        // goes where the reporter went.
        for index in events.indices where events[index].kind == .begin && events[index].flags.contains(.sequenced) {
            if let time = moved[events[index].sequence] { events[index].time = time }
        }
    }

    /// The time of vsync `sequence` among `vsyncs` (in sequence order): that of the first of
    /// `vsyncs` with its sequence; else, in proportion, between the nearest before and after
    /// it; nil when one side has none.
    private static func time(of sequence: UInt32, among vsyncs: [(sequence: UInt32, time: Double)]) -> Double? {
        var low = 0, high = vsyncs.count
        while low < high {
            let middle = (low + high) / 2
            if vsyncs[middle].sequence < sequence { low = middle + 1 } else { high = middle }
        }
        guard low < vsyncs.count else { return nil }
        if vsyncs[low].sequence == sequence { return vsyncs[low].time }
        guard low > 0 else { return nil }
        let before = vsyncs[low - 1], after = vsyncs[low]
        let share = Double(sequence - before.sequence) / Double(after.sequence - before.sequence)
        return before.time + share * (after.time - before.time)
    }
}
