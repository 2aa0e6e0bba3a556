extension ScreenVisitEvent {
    /// Set this `userInfo` key to `true` on an encoder to send reports in their compact
    /// base64 binary form (`reportData`, `motionData`) instead of JSON objects.
    public static let compactReportsKey = CodingUserInfoKey(rawValue: "framescope.compactReports")!

    enum CodingKeys: String, CodingKey {
        case kind, screen, startedAt, duration, context, report, reportData, motion, motionData, hangs, resources, mainThreadHitches
    }

    /// Decodes an event whose reports are JSON objects or base64 binary forms; a binary
    /// report is checked as strictly as a JSON one.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        kind = try container.decode(String.self, forKey: .kind)
        screen = try container.decode(String.self, forKey: .screen)
        startedAt = try container.decode(String.self, forKey: .startedAt)
        duration = try container.decode(Double.self, forKey: .duration)
        context = try container.decode(VisitContext.self, forKey: .context)
        if container.contains(.report) || !container.contains(.reportData) {
            report = try container.decode(FrameReport.self, forKey: .report)
        } else {
            report = try Self.binaryReport(container, .reportData)
        }
        if container.contains(.motion) || !container.contains(.motionData) {
            motion = try container.decodeIfPresent(FrameReport.self, forKey: .motion)
        } else {
            motion = try container.decodeNil(forKey: .motionData) ? nil : Self.binaryReport(container, .motionData)
        }
        hangs = try container.decode([HangRecord].self, forKey: .hangs)
        resources = try container.decodeIfPresent(ResourceUsage.self, forKey: .resources)
        mainThreadHitches = try container.decodeIfPresent(MainThreadHitches.self, forKey: .mainThreadHitches)
    }

    /// Encodes the event; reports as objects, or as base64 binary with ``compactReportsKey``.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .kind)
        try container.encode(screen, forKey: .screen)
        try container.encode(startedAt, forKey: .startedAt)
        try container.encode(duration, forKey: .duration)
        try container.encode(context, forKey: .context)
        if encoder.userInfo[Self.compactReportsKey] as? Bool == true {
            try container.encode(Base64.encode(report.binaryEncoded()), forKey: .reportData)
            try container.encode(motion.map { Base64.encode($0.binaryEncoded()) }, forKey: .motionData)
        } else {
            try container.encode(report, forKey: .report)
            try container.encode(motion, forKey: .motion)
        }
        try container.encode(hangs, forKey: .hangs)
        try container.encodeIfPresent(resources, forKey: .resources)
        try container.encodeIfPresent(mainThreadHitches, forKey: .mainThreadHitches)
    }

    static func binaryReport(_ container: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys) throws -> FrameReport {
        let text = try container.decode(String.self, forKey: key)
        switch deviceReport(base64: text, field: key.stringValue) {
        case let .success(report): return report
        case let .failure(error): throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: error.message)
        }
    }

    /// A device's report from its base64 binary form (the text of `reportData` or
    /// `motionData`, named by `field` in the message), checked as decoding an event checks
    /// it: tallies of more than ``FrameReport/maximumTallyEntriesPerVisit`` entries are
    /// refused before they are read, then the report's physics
    /// (``FrameReport/inconsistency``).
    ///
    /// The collector's own decoder settles a refused report with this, so its message is
    /// the one `JSONDecoder` would give.
    /// - Complexity: O(*n*) in the text's length.
    public static func deviceReport(base64 text: String, field: String) -> Result<FrameReport, BinaryReportError> {
        guard let bytes = Base64.decode(text) else { return .failure(BinaryReportError("\(field) is not base64")) }
        do {
            return .success(try FrameReport(binary: bytes, maximumTallyEntries: FrameReport.maximumTallyEntriesPerVisit))
        } catch {
            return .failure(error)
        }
    }
}

/// Standard base64 (RFC 4648, with padding), without Foundation.
public enum Base64 {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = UInt8(index) }
        return table
    }()

    /// `bytes` as base64 text.
    public static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index + 3 <= bytes.count {
            let n = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)], alphabet[Int(n & 63)]]
            index += 3
        }
        let rest = bytes.count - index
        if rest > 0 {
            let n = UInt32(bytes[index]) << 16 | (rest == 2 ? UInt32(bytes[index + 1]) << 8 : 0)
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], rest == 2 ? alphabet[Int(n >> 6 & 63)] : UInt8(ascii: "="), UInt8(ascii: "=")]
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of base64 `text`, or `nil` when it is not padded base64.
    public static func decode(_ text: String) -> [UInt8]? {
        let input = Array(text.utf8)
        guard input.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(input.count / 4 * 3)
        var index = 0
        while index < input.count {
            let last = index + 4 == input.count
            let padding = last ? (input[index + 3] == UInt8(ascii: "=") ? (input[index + 2] == UInt8(ascii: "=") ? 2 : 1) : 0) : 0
            var n: UInt32 = 0
            for offset in 0..<4 {
                let character = input[index + offset]
                let value: UInt8
                if offset >= 4 - padding {
                    guard character == UInt8(ascii: "=") else { return nil }
                    value = 0
                } else {
                    value = values[Int(character)]
                    guard value != 0xFF else { return nil }
                }
                n = n << 6 | UInt32(value)
            }
            out.append(UInt8(n >> 16 & 0xFF))
            if padding < 2 { out.append(UInt8(n >> 8 & 0xFF)) }
            if padding < 1 { out.append(UInt8(n & 0xFF)) }
            index += 4
        }
        return out
    }
}
