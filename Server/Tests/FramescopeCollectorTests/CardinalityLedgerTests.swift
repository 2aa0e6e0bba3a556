import FramescopeCollector
import FramescopeCore
import Testing

/// `CardinalityLedger` alone, without any store: daily and window limits, folding into
/// `(other)`, the folded counts and the values to write back. The stores load and write;
/// the store contract suite checks that they do it alike.
@Suite("Cardinality ledger: admission and folding as values")
struct CardinalityLedgerTests {
    static let day: Int64 = 1_750_032_000 - 1_750_032_000 % 86_400

    static func limits(screens: Int, window: Int) -> CardinalityLimits {
        var limits = CardinalityLimits()
        limits.screens = screens
        limits.screensInWindow = window
        return limits
    }

    static func key(_ day: Int64 = day, name: String = QueryDimension.screen.queryName) -> CardinalityLedger.Key {
        CardinalityLedger.Key(app: "shop", day: day, name: name)
    }

    @Test("Known values pass and are not written again; new ones pass up to the daily limit, then fold")
    func dailyLimit() {
        var ledger = CardinalityLedger(limits: Self.limits(screens: 2, window: 100))
        ledger.load([StoredText("Feed")], for: Self.key())
        ledger.setWindow(CardinalityLedger.Window(count: 1, members: [StoredText("Feed")]), app: "shop", name: "screen")
        #expect(ledger.admit("Feed", app: "shop", day: Self.day, dimension: .screen) == "Feed")
        #expect(ledger.admit("Cart", app: "shop", day: Self.day, dimension: .screen) == "Cart")
        #expect(ledger.admit("Cart", app: "shop", day: Self.day, dimension: .screen) == "Cart")
        #expect(ledger.admit("Search", app: "shop", day: Self.day, dimension: .screen) == CardinalityLimits.other)
        #expect(ledger.admit("Profile", app: "shop", day: Self.day, dimension: .screen) == CardinalityLimits.other)
        #expect(ledger.admitted.map(\.value) == ["Cart"])
        #expect(ledger.admitted.first?.key == Self.key())
        #expect(ledger.folded == ["shop": ["screen": 2]])
    }

    @Test("A value new for the window passes only while the window has room; one already in it counts against the day only")
    func windowLimit() {
        var ledger = CardinalityLedger(limits: Self.limits(screens: 10, window: 2))
        ledger.load([], for: Self.key())
        ledger.setWindow(CardinalityLedger.Window(count: 2, members: [StoredText("Feed")]), app: "shop", name: "screen")
        #expect(ledger.admit("Feed", app: "shop", day: Self.day, dimension: .screen) == "Feed", "in the window: a daily count only")
        #expect(ledger.admit("Cart", app: "shop", day: Self.day, dimension: .screen) == CardinalityLimits.other, "the window is full")
        #expect(ledger.admitted.map(\.value) == ["Feed"])
        #expect(ledger.folded["shop"]?["screen"] == 1)
    }

    @Test("A value entering the window takes its room, for every later day of the flush")
    func windowGrows() {
        var ledger = CardinalityLedger(limits: Self.limits(screens: 10, window: 1))
        ledger.setWindow(CardinalityLedger.Window(count: 0, members: []), app: "shop", name: "screen")
        #expect(ledger.admit("Feed", app: "shop", day: Self.day, dimension: .screen) == "Feed")
        #expect(ledger.window(app: "shop", name: "screen") == CardinalityLedger.Window(count: 1, members: [StoredText("Feed")]))
        #expect(ledger.admit("Feed", app: "shop", day: Self.day + 86_400, dimension: .screen) == "Feed", "a member on another day")
        #expect(ledger.admit("Cart", app: "shop", day: Self.day + 86_400, dimension: .screen) == CardinalityLimits.other)
        #expect(ledger.admitted.map(\.key.day) == [Self.day, Self.day + 86_400])
    }

    @Test("Dimensions with a fixed set of values admit everything and record nothing")
    func fixedSets() {
        var ledger = CardinalityLedger(limits: Self.limits(screens: 0, window: 0))
        #expect(ledger.admit("wifi", app: "shop", day: Self.day, dimension: .network) == "wifi")
        #expect(ledger.admitted.isEmpty && ledger.folded.isEmpty)
    }

    @Test("A declared tag has the tag's daily limit and window, under tag.KEY")
    func tags() {
        var limits = CardinalityLimits()
        limits.tagValuesInWindow = 1
        var ledger = CardinalityLedger(limits: limits)
        ledger.setWindow(CardinalityLedger.Window(count: 0, members: []), app: "shop", name: "tag.cohort")
        #expect(ledger.admit(tagValue: "beta", app: "shop", day: Self.day, tagKey: "cohort") == "beta")
        #expect(ledger.admit(tagValue: "gamma", app: "shop", day: Self.day, tagKey: "cohort") == CardinalityLimits.other)
        #expect(ledger.admitted.first?.key == Self.key(name: "tag.cohort"))
        #expect(ledger.folded == ["shop": ["tag.cohort": 1]])
    }

    @Test("One batch's folded counts are the growth since the batch began")
    func foldedDelta() {
        var ledger = CardinalityLedger(limits: Self.limits(screens: 0, window: 10))
        _ = ledger.admit("Feed", app: "shop", day: Self.day, dimension: .screen)
        let before = ledger.folded["shop"] ?? [:]
        _ = ledger.admit("Cart", app: "shop", day: Self.day, dimension: .screen)
        _ = ledger.admit("Cart", app: "shop", day: Self.day, dimension: .screen)
        #expect(ledger.folded(app: "shop", since: before) == ["screen": 2])
        #expect(ledger.folded(app: "shop", since: ledger.folded["shop"] ?? [:]) == [:])
        #expect(ledger.folded(app: "other", since: [:]) == [:])
    }

    @Test("Values compare as bytes: two spellings of one name are two values")
    func bytes() {
        var ledger = CardinalityLedger(limits: Self.limits(screens: 1, window: 10))
        ledger.load([StoredText("Caf\u{e9}")], for: Self.key())
        #expect(ledger.isKnown("Caf\u{e9}", for: Self.key()))
        #expect(!ledger.isKnown("Cafe\u{301}", for: Self.key()))
        #expect(ledger.admit("Cafe\u{301}", app: "shop", day: Self.day, dimension: .screen) == CardinalityLimits.other)
    }
}
