extension DecodingError {
    /// The JSON path of the value at fault (`events[2].report.dropEvents`); empty for the
    /// top level.
    public var fieldPath: String {
        var keys: [any CodingKey]
        switch self {
        case let .dataCorrupted(context): keys = context.codingPath
        case let .keyNotFound(key, context): keys = context.codingPath + [key]
        case let .typeMismatch(_, context): keys = context.codingPath
        case let .valueNotFound(_, context): keys = context.codingPath
        @unknown default: keys = []
        }
        var text = ""
        for key in keys {
            if let index = key.intValue { text += "[\(index)]" } else { text += (text.isEmpty ? "" : ".") + key.stringValue }
        }
        return text
    }

    /// What is wrong with that value, for a person ("is required", "expected Int").
    public var reason: String {
        switch self {
        case let .dataCorrupted(context): return context.debugDescription
        case .keyNotFound: return "is required"
        case let .typeMismatch(type, _): return "expected \(type)"
        case let .valueNotFound(type, _): return "expected \(type), found null"
        @unknown default: return "\(self)"
        }
    }
}
