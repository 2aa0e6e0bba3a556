extension Budget: Codable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case recording, motion, eachSegment
    }

    /// Reads the JSON form described on ``Budget``; unknown scopes, metrics and bounds
    /// are errors that name the key, so a typo never silently turns a limit off.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyKey.self)
        var budget = Budget()
        for key in container.allKeys {
            guard let scope = CodingKeys(rawValue: key.stringValue) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "unknown scope '\(key.stringValue)'; use recording, motion or eachSegment")
            }
            let limits = try Self.decodeLimits(try container.nestedContainer(keyedBy: AnyKey.self, forKey: key))
            switch scope {
            case .recording: budget.recording = limits
            case .motion: budget.motion = limits
            case .eachSegment: budget.eachSegment = limits
            }
        }
        self = budget
    }

    private static func decodeLimits(_ container: KeyedDecodingContainer<AnyKey>) throws -> [Limit] {
        var limits: [Limit] = []
        for key in container.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) {
            guard let metric = Metric(rawValue: key.stringValue) else {
                let known = Metric.allCases.map(\.rawValue).joined(separator: ", ")
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "unknown metric '\(key.stringValue)'; known metrics: \(known)")
            }
            let bounds = try container.nestedContainer(keyedBy: AnyKey.self, forKey: key)
            if bounds.allKeys.isEmpty {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "give {\"max\": …} or {\"min\": …} for \(metric.rawValue)")
            }
            for boundKey in bounds.allKeys.sorted(by: { $0.stringValue > $1.stringValue }) {
                guard let bound = Limit.Bound(rawValue: boundKey.stringValue) else {
                    throw DecodingError.dataCorruptedError(forKey: boundKey, in: bounds, debugDescription: "unknown bound '\(boundKey.stringValue)'; use max or min")
                }
                let value = try bounds.decode(Double.self, forKey: boundKey)
                guard value.isFinite else {
                    throw DecodingError.dataCorruptedError(forKey: boundKey, in: bounds, debugDescription: "limit must be a finite number")
                }
                limits.append(Limit(metric: metric, bound: bound, value: value))
            }
        }
        return limits
    }

    /// Writes the JSON form described on ``Budget``.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: AnyKey.self)
        for (scope, limits) in [(CodingKeys.recording, recording), (.motion, motion), (.eachSegment, eachSegment)] where !limits.isEmpty {
            var scopeContainer = container.nestedContainer(keyedBy: AnyKey.self, forKey: AnyKey(scope.rawValue))
            var seen: [Metric] = []
            for limit in limits where !seen.contains(limit.metric) {
                seen.append(limit.metric)
                var bounds = scopeContainer.nestedContainer(keyedBy: AnyKey.self, forKey: AnyKey(limit.metric.rawValue))
                for same in limits where same.metric == limit.metric {
                    try bounds.encode(same.value, forKey: AnyKey(same.bound.rawValue))
                }
            }
        }
    }
}

/// A coding key for maps whose keys are data (metric names, scopes).
struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
