import Foundation
@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeSQLite
@testable import FramescopeStore
import Testing

/// A MetricKit payload is dated by its period: one whose `timeStampBegin` or `timeStampEnd`
/// cannot be read, or whose end is before its begin, is refused naming the field (issue 43,
/// item 9: it was dated at receipt, which skipped the 30-day check).
@Suite("MetricKit payload periods")
struct MetricKitPeriodTests {
    static let now = CollectorRouteTests.now

    /// A metric payload (figures and all) whose two time stamps are the JSON texts given.
    static func payload(begin: String, end: String, version: String = "1.0") -> String {
        MetricKitRouteTests.metricPayload(version: version, ratio: "2 ms per s")
            .replacingOccurrences(of: #""2026-11-19 00:00:00 +0000""#, with: begin)
            .replacingOccurrences(of: #""2026-11-19 23:59:00 +0000""#, with: end)
    }

    @Test("An inverted or unreadable period refuses its payload, naming the field; the others are stored")
    func refused() async throws {
        let temporary = try await BoundedListTests.store([])
        let service = IngestService(store: temporary.store, clock: { Self.now })
        // A payload whose issues fill the capped list before the period is checked: the
        // refusal must not depend on that list.
        let flooded = MetricKitRouteTests.metricPayload(version: "1.0", ratio: "2 ms per s",
                                                        hangs: Array(repeating: "20 parsecs", count: 105)) // MetricKitParser.maximumIssues is 100
            .replacingOccurrences(of: #""2026-11-19 23:59:00 +0000""#, with: #""2019-01-01 00:00:00 +0000""#)
        let cases: [(payload: String, field: String)] = [
            (Self.payload(begin: #""2026-11-19 00:00:00 +0000""#, end: #""2019-01-01 00:00:00 +0000""#), "timeStampEnd"),
            (Self.payload(begin: #""yesterday""#, end: #""2026-11-19 23:59:00 +0000""#), "timeStampBegin"),
            (Self.payload(begin: #""2026-11-19 00:00:00 +0000""#, end: "1700000000"), "timeStampEnd"),
            (flooded, "timeStampEnd"),
        ]
        let good = Self.payload(begin: #""2026-11-19 00:00:00 +0000""#, end: #""2026-11-19 23:59:00 +0000""#, version: "2.0")
        let absent = Self.payload(begin: "null", end: "null", version: "3.0")
        let body = "[" + (cases.map(\.payload) + [good, absent]).joined(separator: ",") + "]"
        let response = try await service.ingestMetricKit(body: Array(body.utf8), app: "shop", logger: .init(label: "test"))
        #expect(response.rejected.map(\.index) == Array(0..<cases.count))
        #expect(response.rejected.map(\.field) == cases.map(\.field))
        #expect(response.rejected.first?.message.contains("ends before timeStampBegin") == true, "\(response.rejected)")
        #expect(response.accepted == 2, "the readable payload and the one without a period (dated at receipt)")
        let versions = try await temporary.store.metricKitVersions(app: "shop", query: ScreenQuery(from: Self.now - 60 * 86_400, to: Self.now + 86_400))
        #expect(Set(versions.map(\.appVersion)) == ["2.0", "3.0"])
    }
}
