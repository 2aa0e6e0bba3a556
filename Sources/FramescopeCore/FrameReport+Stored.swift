/// A report from sums a store merged itself (ClickHouse merges rollups in the engine): the
/// same checks as the binary form's decoder, so a store cannot hand the queries a report
/// that no recording could produce.
extension FrameReport {
    /// The mergeable state of a report, field by field, as a store keeps it: a field per
    /// ``FrameReport/counters`` entry (reached by name or by ``subscript(count:)`` and
    /// ``subscript(nanoseconds:)``), the extremes, the histograms and the stability band.
    public struct StoredSums: Sendable, Hashable {
        /// ``FrameReport/frames``.
        public var frames = 0
        /// ``FrameReport/durationNanoseconds``, nanoseconds.
        public var durationNanoseconds: NanosecondTotal = 0
        /// ``FrameReport/firstFrames``.
        public var firstFrames = 0
        /// ``FrameReport/firstDurationNanoseconds``, nanoseconds.
        public var firstDurationNanoseconds: NanosecondTotal = 0
        /// ``FrameReport/minFrameDuration``, seconds.
        public var minFrameDuration: Double?
        /// ``FrameReport/maxFrameDuration``, seconds.
        public var maxFrameDuration: Double?
        /// ``FrameReport/droppedFrames``.
        public var droppedFrames = 0
        /// ``FrameReport/dropEvents``.
        public var dropEvents = 0
        /// ``FrameReport/maxDroppedFrames``.
        public var maxDroppedFrames = 0
        /// ``FrameReport/hitchTimeNanoseconds``, nanoseconds.
        public var hitchTimeNanoseconds: NanosecondTotal = 0
        /// ``FrameReport/hangs``.
        public var hangs = 0
        /// ``FrameReport/hangTimeNanoseconds``, nanoseconds.
        public var hangTimeNanoseconds: NanosecondTotal = 0
        /// ``FrameReport/slowFrames``.
        public var slowFrames = 0
        /// ``FrameReport/frozenFrames``.
        public var frozenFrames = 0
        /// ``FrameReport/rejectedTicks``.
        public var rejectedTicks = 0
        /// ``FrameReport/frameDurations``.
        public var frameDurations = DurationHistogram()
        /// ``FrameReport/windowFPS`` (keys in hundredths of FPS).
        public var windowFPS = Tally()
        /// ``FrameReport/refreshRates`` (keys in whole Hz).
        public var refreshRates = Tally()
        /// ``FrameReport/stabilityBand``, a fraction.
        public var stabilityBand = 0.2

        /// All zero: the sums of no frames.
        public init() {}
    }

    /// The report of `sums`.
    /// - Throws: ``BinaryReportError`` naming the field when the sums describe no possible
    ///   report (``inconsistency``).
    public init(storedSums sums: StoredSums) throws(BinaryReportError) {
        self.init()
        for counter in Self.counters {
            switch counter.kind {
            case .count, .maximum: self[count: counter] = sums[count: counter]
            case .nanoseconds: self[nanoseconds: counter] = sums[nanoseconds: counter]
            }
        }
        minFrameDuration = sums.minFrameDuration
        maxFrameDuration = sums.maxFrameDuration
        frameDurations = sums.frameDurations
        windowFPS = sums.windowFPS
        refreshRates = sums.refreshRates
        stabilityBand = sums.stabilityBand
        if let (field, message) = inconsistency { throw BinaryReportError("\(field): \(message)") }
    }
}
