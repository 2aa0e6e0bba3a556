@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeSQLite
@testable import FramescopeStore
import Testing

/// `IngestPlanner` alone, without any store: duplicates within a flush and against the
/// ledger, declared tags, cardinality folding and each batch's folded counts, and what the
/// store must load. The store contract and conformance suites check that both stores write
/// the plan alike.
@Suite("Ingest planner: a flush's plan as a value")
struct IngestPlannerTests {
    static let now = 1_750_000_000.0
    static let day = IngestPlanner.day(of: now)

    /// One simulated visit, reused.
    static let visit = makeBatch(id: "template", count: 1, start: now).events[0]

    /// A batch of `app` with one visit per screen, a minute apart, carrying `tags`.
    static func batch(_ id: String, app: String = "shop", screens: [String], tags: [String: String] = [:]) -> IngestBatch {
        let events = screens.enumerated().map { index, screen -> (ScreenVisitEvent, Double) in
            var event = visit
            event.screen = screen
            event.context.tags = tags
            return (event, now + Double(index) * 60)
        }
        return IngestBatch(app: app, batchId: id, appVersion: "1.0", osVersion: "18.1", deviceModel: "iPhone14,5", events: events,
                           rawEvents: events.map { _ in "{}" }, receivedAt: now)
    }

    /// A ledger that knows nothing and has room in every window it is asked about.
    static func emptyLedger(_ limits: CardinalityLimits, for batches: [IngestBatch], declaredTags: [String: [String]] = [:]) -> CardinalityLedger {
        var ledger = CardinalityLedger(limits: limits)
        for key in IngestPlanner.ledgerKeys(for: batches, declaredTags: declaredTags, limits: limits) { ledger.load([], for: key) }
        for (app, names) in IngestPlanner.windowCandidates(for: batches, declaredTags: declaredTags, ledger: ledger) {
            for name in names.keys { ledger.setWindow(CardinalityLedger.Window(count: 0, members: []), app: app, name: name) }
        }
        return ledger
    }

    @Test("A batch id in the ledger or earlier in the flush is a duplicate; the same id of another app is not")
    func duplicates() {
        let batches = [Self.batch("a", screens: ["Feed"]), Self.batch("b", screens: ["Feed"]), Self.batch("a", screens: ["Cart"]),
                       Self.batch("a", app: "other", screens: ["Feed"])]
        let plan = IngestPlanner.plan(batches, known: [["shop", "b"]], declaredTags: [:],
                                      ledger: Self.emptyLedger(CardinalityLimits(), for: batches))
        #expect(plan.results == [IngestResult(stored: 1, duplicate: false), IngestResult(stored: 0, duplicate: true),
                                 IngestResult(stored: 0, duplicate: true), IngestResult(stored: 1, duplicate: false)])
        #expect(plan.stored.map { [$0.batch.app, $0.batch.batchId] } == [["shop", "a"], ["other", "a"]])
        #expect(plan.stored.first?.events.first?.dimensionValues.first == "Feed", "the first batch of an id is the one stored")
    }

    @Test("Screens past the daily limit fold into (other), counted in the batch that folded them")
    func folding() {
        var limits = CardinalityLimits()
        limits.screens = 2
        let batches = [Self.batch("a", screens: ["Feed", "Cart", "Search"]), Self.batch("b", screens: ["Feed", "Profile", "Search"])]
        let plan = IngestPlanner.plan(batches, known: [], declaredTags: [:], ledger: Self.emptyLedger(limits, for: batches))
        let screen = QueryDimension.all.firstIndex(of: .screen) ?? 0
        #expect(plan.stored.map { $0.events.map { $0.dimensionValues[screen] } } == [["Feed", "Cart", "(other)"], ["Feed", "(other)", "(other)"]])
        #expect(plan.results.map(\.folded) == [["screen": 1], ["screen": 2]])
        #expect(plan.admitted.filter { $0.key.name == "screen" }.map(\.value) == ["Feed", "Cart"])
    }

    @Test("Declared tags get a value per event (empty tag values included) and their own ledger names")
    func declaredTags() {
        let batches = [Self.batch("a", screens: ["Feed", "Cart"], tags: ["cohort": "beta"]), Self.batch("b", app: "other", screens: ["Feed"])]
        let declared = ["shop": ["cohort", "plan"]]
        let plan = IngestPlanner.plan(batches, known: [], declaredTags: declared, ledger: Self.emptyLedger(CardinalityLimits(), for: batches, declaredTags: declared))
        #expect(plan.stored.map(\.tagKeys) == [["cohort", "plan"], []])
        #expect(plan.stored.first?.events.map(\.tagValues) == [["beta", DeclaredTags.value(of: "plan", in: ["cohort": "beta"])],
                                                                ["beta", DeclaredTags.value(of: "plan", in: ["cohort": "beta"])]])
        #expect(plan.admitted.contains { $0.key == CardinalityLedger.Key(app: "shop", day: Self.day, name: "tag.cohort") && $0.value == "beta" })
    }

    @Test("What to load: every gated dimension and declared tag on each event's day; window candidates are the values not known for their day")
    func loads() {
        let batches = [Self.batch("a", screens: ["Feed", "Cart"])]
        let keys = IngestPlanner.ledgerKeys(for: batches, declaredTags: ["shop": ["cohort"]], limits: CardinalityLimits())
        let gated = QueryDimension.all.filter { CardinalityLimits().limit($0) != nil }.map(\.queryName)
        #expect(Set(keys.map(\.name)) == Set(gated + ["tag.cohort"]))
        #expect(Set(keys.map(\.day)) == [Self.day])
        var ledger = CardinalityLedger(limits: CardinalityLimits())
        ledger.load([StoredText("Feed")], for: CardinalityLedger.Key(app: "shop", day: Self.day, name: "screen"))
        let candidates = IngestPlanner.windowCandidates(for: batches, declaredTags: [:], ledger: ledger)
        #expect(candidates["shop"]?["screen"] == [StoredText("Cart")])
    }

    @Test("The day of a start is its UTC day; a start no store keeps counts on day 0")
    func days() {
        #expect(IngestPlanner.day(of: 86_400 * 3 + 5) == 86_400 * 3)
        #expect(IngestPlanner.day(of: 86_400 * 3 - 0.5) == 86_400 * 2)
        #expect(IngestPlanner.day(of: .nan) == 0)
        #expect(IngestPlanner.day(of: 1e300) == 0)
    }
}
