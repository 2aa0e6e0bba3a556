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
        func seconds(_ key: CodingKeys) throws -> NanosecondTotal {
            let value = try container.decode(Double.self, forKey: key)
            guard let total = NanosecondTotal(seconds: value) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "must be a non-negative number of seconds, got \(value)")
            }
            return total
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
        var ratePairs: [(key: Int, count: Int)] = []
        ratePairs.reserveCapacity(rates.allKeys.count)
        for key in rates.allKeys {
            guard let hz = key.intValue, hz > 0 else {
                throw DecodingError.dataCorruptedError(forKey: .refreshRates, in: container, debugDescription: "key '\(key.stringValue)' is not a refresh rate in whole Hz")
            }
            let frames = try rates.decode(Int.self, forKey: key)
            guard frames > 0 else {
                throw DecodingError.dataCorruptedError(forKey: .refreshRates, in: container, debugDescription: "frames at \(hz) Hz must be positive, got \(frames)")
            }
            ratePairs.append((hz, frames))
        }
        refreshRates = Tally(counting: ratePairs)

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
        var windowPairs: [(key: Int, count: Int)] = []
        while !windowList.isAtEnd {
            var pair = try windowList.nestedUnkeyedContainer()
            let fps = try pair.decode(Double.self)
            let count = try pair.decode(Int.self)
            guard fps.isFinite, fps >= 0, fps <= Double(FrameReport.maximumWindowFPSKey) / 100, count > 0 else {
                throw DecodingError.dataCorruptedError(forKey: .windowFPS, in: histograms,
                    debugDescription: "expected [fps 0–\(FrameReport.maximumWindowFPSKey / 100), windows > 0], got [\(fps), \(count)]")
            }
            windowPairs.append((Int((fps * 100).rounded()), count))
        }
        windowFPS = Tally(counting: windowPairs)

        if let (field, message) = inconsistency {
            let key = CodingKeys(stringValue: field) ?? .frames
            throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: message)
        }
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
