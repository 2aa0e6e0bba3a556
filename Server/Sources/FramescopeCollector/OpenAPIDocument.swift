import Foundation
import FramescopeCore

/// The collector's OpenAPI 3 document (`Sources/FramescopeCollector/Resources/openapi.json`),
/// served at `GET /openapi.json`.
///
/// The checked-in document does not spell the dimensions: the served one has a query
/// parameter per ``QueryDimension`` on every route that takes the time range, written from
/// the registry (``withDimensions(_:)``).
///
/// The checked-in document's example batch starts at ``exampleStartedAt``. The collector
/// refuses events more than 30 days old, so the served copy moves that time to an hour
/// before now, and the example stays one a real client can post and have accepted.
public enum OpenAPIDocument {
    /// The `startedAt` of the example event in the checked-in document.
    public static let exampleStartedAt = "2026-11-22T15:00:00.000Z"

    /// The document as checked in.
    public static let text: String = {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "json"),
              let text = try? String(contentsOf: url, encoding: .utf8) else { return "{}" }
        return text
    }()

    /// The checked-in document with the registry's dimension parameters, built once.
    static let expanded: String = withDimensions(text)

    /// The document as served at `now` (Unix seconds): the dimensions' parameters added,
    /// the example moved to an hour ago.
    public static func served(now: Double) -> String {
        expanded.replacingOccurrences(of: exampleStartedAt, with: ISO8601.format(unixSeconds: now - 3600))
    }
}
