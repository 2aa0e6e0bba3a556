/// A report is encoded as the JSON object of DESIGN §3 — the derived figures under
/// their metric names, `null` where there is no data — plus the sums and histograms
/// that make it mergeable (`firstFrames`, `firstDuration`, `frameDuration.min`,
/// `histograms`). Decoding reads only the mergeable parts and recomputes every
/// derived figure, so a decoded report is checked, not trusted:
/// ``FrameReport/inconsistency`` names the first field that contradicts another.
extension FrameReport: Codable {
    enum CodingKeys: String, CodingKey {
        case frames, duration, averageFPS, firstFPS, minFPS, maxFPS
        case droppedFrames, dropEvents, maxDroppedFrames, hitchTime, hitchRatio
        case hangs, hangTime, hangRate, slowFrames, frozenFrames, stability
        case frameDuration, refreshRates, rejectedTicks
        case firstFrames, firstDuration, windows, histograms
    }

    enum FrameDurationKeys: String, CodingKey {
        case p50, p90, p95, p99, max, min
    }

    enum HistogramKeys: String, CodingKey {
        case frameDuration, windowFPS, stabilityBand
    }

    /// Encodes the DESIGN §3 object plus the mergeable state.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(frames, forKey: .frames)
        try container.encode(duration, forKey: .duration)
        try container.encode(averageFPS, forKey: .averageFPS)
        try container.encode(firstFPS, forKey: .firstFPS)
        try container.encode(minFPS, forKey: .minFPS)
        try container.encode(maxFPS, forKey: .maxFPS)
        try container.encode(droppedFrames, forKey: .droppedFrames)
        try container.encode(dropEvents, forKey: .dropEvents)
        try container.encode(frames > 0 ? maxDroppedFrames : nil, forKey: .maxDroppedFrames)
        try container.encode(hitchTime, forKey: .hitchTime)
        try container.encode(hitchRatio, forKey: .hitchRatio)
        try container.encode(hangs, forKey: .hangs)
        try container.encode(hangTime, forKey: .hangTime)
        try container.encode(hangRate, forKey: .hangRate)
        try container.encode(slowFrames, forKey: .slowFrames)
        try container.encode(frozenFrames, forKey: .frozenFrames)
        try container.encode(stability, forKey: .stability)
        var durations = container.nestedContainer(keyedBy: FrameDurationKeys.self, forKey: .frameDuration)
        try durations.encode(frameDuration(atQuantile: 0.50), forKey: .p50)
        try durations.encode(frameDuration(atQuantile: 0.90), forKey: .p90)
        try durations.encode(frameDuration(atQuantile: 0.95), forKey: .p95)
        try durations.encode(frameDuration(atQuantile: 0.99), forKey: .p99)
        try durations.encode(maxFrameDuration, forKey: .max)
        try durations.encode(minFrameDuration, forKey: .min)
        var rates = container.nestedContainer(keyedBy: IntegerKey.self, forKey: .refreshRates)
        for entry in refreshRates.entries {
            try rates.encode(entry.count, forKey: IntegerKey(entry.key))
        }
        try container.encode(rejectedTicks, forKey: .rejectedTicks)
        try container.encode(firstFrames, forKey: .firstFrames)
        try container.encode(firstDuration, forKey: .firstDuration)
        try container.encode(windows, forKey: .windows)
        var histograms = container.nestedContainer(keyedBy: HistogramKeys.self, forKey: .histograms)
        try histograms.encode(frameDurations.buckets.map { [$0.index, $0.count] }, forKey: .frameDuration)
        var windowList = histograms.nestedUnkeyedContainer(forKey: .windowFPS)
        for entry in windowFPS.entries {
            var pair = windowList.nestedUnkeyedContainer()
            try pair.encode(Double(entry.key) / 100)
            try pair.encode(entry.count)
        }
        try histograms.encode(stabilityBand, forKey: .stabilityBand)
    }

    /// Decodes the mergeable state and checks it (see ``inconsistency``).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func count(_ key: CodingKeys) throws -> Int {
            let value = try container.decode(Int.self, forKey: key)
            guard value >= 0 else {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "must not be negative, got \(value)")
            }
            return value
        }
        func seconds(_ key: CodingKeys) throws -> Int64 {
            let value = try container.decode(Double.self, forKey: key)
            guard value.isFinite, value >= 0, value < 9e9 else {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "must be a non-negative number of seconds, got \(value)")
            }
            return FrameReport.nanoseconds(value)
        }
        self.init()
        frames = try count(.frames)
        durationNanoseconds = try seconds(.duration)
        firstFrames = try count(.firstFrames)
        firstDurationNanoseconds = try seconds(.firstDuration)
        droppedFrames = try count(.droppedFrames)
        dropEvents = try count(.dropEvents)
        maxDroppedFrames = try container.decodeIfPresent(Int.self, forKey: .maxDroppedFrames) ?? 0
        hitchTimeNanoseconds = try seconds(.hitchTime)
        hangs = try count(.hangs)
        hangTimeNanoseconds = try seconds(.hangTime)
        slowFrames = try count(.slowFrames)
        frozenFrames = try count(.frozenFrames)
        rejectedTicks = try count(.rejectedTicks)

        let durations = try container.nestedContainer(keyedBy: FrameDurationKeys.self, forKey: .frameDuration)
        minFrameDuration = try durations.decodeIfPresent(Double.self, forKey: .min)
        maxFrameDuration = try durations.decodeIfPresent(Double.self, forKey: .max)

        let rates = try container.nestedContainer(keyedBy: IntegerKey.self, forKey: .refreshRates)
        var rateTally = Tally()
        for key in rates.allKeys {
            guard let hz = key.intValue, hz > 0 else {
                throw DecodingError.dataCorruptedError(forKey: .refreshRates, in: container, debugDescription: "key '\(key.stringValue)' is not a refresh rate in whole Hz")
            }
            let frames = try rates.decode(Int.self, forKey: key)
            guard frames > 0 else {
                throw DecodingError.dataCorruptedError(forKey: .refreshRates, in: container, debugDescription: "frames at \(hz) Hz must be positive, got \(frames)")
            }
            rateTally.add(hz, count: frames)
        }
        refreshRates = rateTally

        let histograms = try container.nestedContainer(keyedBy: HistogramKeys.self, forKey: .histograms)
        stabilityBand = try histograms.decode(Double.self, forKey: .stabilityBand)
        let pairs = try histograms.decode([[Int]].self, forKey: .frameDuration)
        do {
            frameDurations = try DurationHistogram(buckets: try pairs.enumerated().map { position, pair in
                guard pair.count == 2 else { throw HistogramError(position: position, message: "expected [bucketIndex, count]") }
                return DurationHistogram.Bucket(index: pair[0], count: pair[1])
            })
        } catch let error as HistogramError {
            throw DecodingError.dataCorruptedError(forKey: .frameDuration, in: histograms, debugDescription: error.description)
        }
        var windowList = try histograms.nestedUnkeyedContainer(forKey: .windowFPS)
        var windows = Tally()
        while !windowList.isAtEnd {
            var pair = try windowList.nestedUnkeyedContainer()
            let fps = try pair.decode(Double.self)
            let count = try pair.decode(Int.self)
            guard fps.isFinite, fps >= 0, fps < 1e7, count > 0 else {
                throw DecodingError.dataCorruptedError(forKey: .windowFPS, in: histograms, debugDescription: "expected [fps ≥ 0, windows > 0], got [\(fps), \(count)]")
            }
            windows.add(Int((fps * 100).rounded()), count: count)
        }
        windowFPS = windows

        if let (field, message) = inconsistency {
            let key = CodingKeys(stringValue: field) ?? .frames
            throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: message)
        }
    }

    /// The first field that contradicts another, with what is wrong, or `nil` when
    /// the report is consistent. Reports made by ``FrameAnalyzer`` are always consistent.
    public var inconsistency: (field: String, message: String)? {
        if !(stabilityBand > 0 && stabilityBand < 1) { return ("histograms", "stabilityBand must lie between 0 and 1, got \(stabilityBand)") }
        if frameDurations.count != frames { return ("frames", "frames is \(frames) but the frame-duration histogram holds \(frameDurations.count)") }
        if refreshRates.total != frames { return ("refreshRates", "refresh rates add up to \(refreshRates.total) frames, not frames = \(frames)") }
        if dropEvents > droppedFrames { return ("dropEvents", "dropEvents (\(dropEvents)) exceeds droppedFrames (\(droppedFrames))") }
        if dropEvents > frames { return ("dropEvents", "dropEvents (\(dropEvents)) exceeds frames (\(frames))") }
        if (dropEvents == 0) != (droppedFrames == 0) { return ("droppedFrames", "droppedFrames (\(droppedFrames)) and dropEvents (\(dropEvents)) must both be zero or both positive") }
        if maxDroppedFrames > droppedFrames || (dropEvents > 0 && maxDroppedFrames < 1) || maxDroppedFrames < 0 {
            return ("maxDroppedFrames", "maxDroppedFrames (\(maxDroppedFrames)) does not fit droppedFrames (\(droppedFrames))")
        }
        if dropEvents > 0, droppedFrames > dropEvents * maxDroppedFrames { return ("maxDroppedFrames", "droppedFrames (\(droppedFrames)) exceeds dropEvents × maxDroppedFrames") }
        if slowFrames + frozenFrames > frames { return ("slowFrames", "slowFrames + frozenFrames exceeds frames (\(frames))") }
        if hangs > frames { return ("hangs", "hangs (\(hangs)) exceeds frames (\(frames))") }
        if hitchTimeNanoseconds > durationNanoseconds { return ("hitchTime", "hitchTime exceeds duration") }
        if hangTimeNanoseconds > durationNanoseconds { return ("hangTime", "hangTime exceeds duration") }
        if (hangs == 0) != (hangTimeNanoseconds == 0) { return ("hangTime", "hangTime must be positive exactly when hangs is") }
        if frames == 0 && durationNanoseconds != 0 { return ("duration", "duration must be 0 without frames") }
        if frames > 0 && durationNanoseconds == 0 { return ("duration", "duration must be positive with frames") }
        if (firstFrames == 0) != (firstDurationNanoseconds == 0) { return ("firstDuration", "firstDuration must be positive exactly when firstFrames is") }
        switch (minFrameDuration, maxFrameDuration) {
        case (nil, nil):
            if frames > 0 { return ("frameDuration", "frameDuration.min and .max are required when there are frames") }
        case let (low?, high?):
            if frames == 0 { return ("frameDuration", "frameDuration.min and .max must be null without frames") }
            if !(low.isFinite && high.isFinite && low > 0 && low <= high) { return ("frameDuration", "frameDuration.min (\(low)) and .max (\(high)) must be positive with min ≤ max") }
            let roundingAllowance = Double(frames) * 1e-9  // each frame's duration is summed in whole nanoseconds
            if Double(frames) * low > duration + roundingAllowance || high > duration + roundingAllowance {
                return ("frameDuration", "frameDuration.min/.max do not fit duration (\(duration) s over \(frames) frames)")
            }
        default:
            return ("frameDuration", "frameDuration.min and .max must both be given or both be null")
        }
        return nil
    }
}

/// A coding key that is a whole number, for maps such as `refreshRates` (`{"60": 1200}`).
struct IntegerKey: CodingKey {
    var stringValue: String
    var intValue: Int?

    init(_ value: Int) {
        stringValue = String(value)
        intValue = value
    }

    init?(stringValue: String) {
        self.stringValue = stringValue
        intValue = Int(stringValue)
    }

    init?(intValue: Int) {
        self.init(intValue)
    }
}
