import FramescopeCore

/// `{"screens": [...]}`: one page of the screens, by name (bytewise), with `"more": true`
/// and a `cursor` to ask for the next page when screens are left out (neither key when the
/// page holds every screen left, so an answer that fits is what it always was).
public struct ScreensResponse: Codable, Sendable {
    /// Screens per page unless `limit` says otherwise.
    public static let defaultLimit = 100
    /// The most screens a page may hold (`limit`).
    public static let maximumLimit = 1_000

    /// One entry per screen, by name (bytewise), at most `limit`.
    public var screens: [ScreenSummary]
    /// Whether screens after the last one were left out: ask again with `after=` ``cursor``.
    public var more: Bool
    /// The position after the last screen given (``ScreenCursor``), only when ``more``.
    public var cursor: String?

    /// A page.
    public init(screens: [ScreenSummary], more: Bool = false, cursor: String? = nil) {
        self.screens = screens
        self.more = more
        self.cursor = cursor
    }

    enum CodingKeys: String, CodingKey { case screens, more, cursor }

    /// Reads a page; an answer without `more` holds every screen left.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        screens = try container.decode([ScreenSummary].self, forKey: .screens)
        more = try container.decodeIfPresent(Bool.self, forKey: .more) ?? false
        cursor = try container.decodeIfPresent(String.self, forKey: .cursor)
    }

    /// Writes `screens`, and `more` and `cursor` only when screens are left out.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(screens, forKey: .screens)
        if more {
            try container.encode(true, forKey: .more)
            try container.encodeIfPresent(cursor, forKey: .cursor)
        }
    }
}
