/// A recording report encodes as its whole report's object (DESIGN §3) with two more
/// keys: `motion` (a report of the same shape, or `null`) and `segments`
/// (`[{"label", "report"}]`), `inferredRefreshRate` (Hz) when the rate was inferred, and
/// `toolFigures` (``ToolFigure``) when the recording's tool printed figures of its own, and
/// `metadata` (``RecordingMetadata``) when it wrote what it captured, and `coverage`
/// (``RecordingCoverage``) when the source was measured only part of the time.
extension RecordingReport: Codable {
    enum CodingKeys: String, CodingKey {
        case motion, segments, inferredRefreshRate, toolFigures, metadata, coverage
    }

    /// Encodes the whole report's keys, then `motion` and `segments`.
    public func encode(to encoder: any Encoder) throws {
        try whole.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(motion, forKey: .motion)
        try container.encode(segments, forKey: .segments)
        try container.encodeIfPresent(inferredRefreshRate, forKey: .inferredRefreshRate)
        if !toolFigures.isEmpty { try container.encode(toolFigures, forKey: .toolFigures) }
        if !metadata.isEmpty { try container.encode(metadata, forKey: .metadata) }
        try container.encodeIfPresent(coverage, forKey: .coverage)
    }

    /// Decodes a report written by ``encode(to:)``. Without `segments`, `motion` is
    /// taken as given; with them, it must equal their merge.
    public init(from decoder: any Decoder) throws {
        let whole = try FrameReport(from: decoder)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let motion = try container.decodeIfPresent(FrameReport.self, forKey: .motion)
        let segments = try container.decodeIfPresent([SegmentReport].self, forKey: .segments) ?? []
        if segments.isEmpty {
            self.init(whole: whole, motion: motion)
        } else {
            self.init(whole: whole, segments: segments)
            if let motion, motion != self.motion {
                throw DecodingError.dataCorruptedError(forKey: .motion, in: container, debugDescription: "motion must equal the merge of segments")
            }
        }
        inferredRefreshRate = try container.decodeIfPresent(Double.self, forKey: .inferredRefreshRate)
        toolFigures = try container.decodeIfPresent([ToolFigure].self, forKey: .toolFigures) ?? []
        metadata = try container.decodeIfPresent([RecordingMetadata].self, forKey: .metadata) ?? []
        coverage = try container.decodeIfPresent(RecordingCoverage.self, forKey: .coverage)
    }
}


