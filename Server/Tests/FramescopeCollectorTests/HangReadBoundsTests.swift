import Foundation
@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeDashboard
@testable import FramescopeSQLite
@testable import FramescopeStore
import GRDB
import Testing

/// Issue 43, items 2, 5 and 6: hang reads that cost what they answer, groups one hang
/// cannot take over, and lists a device can lengthen held to a bound.
@Suite("Hang reads: bounded, robust to one hang")
struct HangReadBoundsTests {
    typealias Kind = StoreContractTests.Kind
    static let now = StoreContractTests.now
    static let appId = HangStackFixtures.appImage.id

    /// A batch of `count` visits to `screen`, each with one hang at `site` lasting `duration` s
    /// (plus index/100, so that every hang has its own length).
    static func batch(id: String, screen: String = "Feed", site: UInt64, count: Int, duration: Double, start: Double) -> IngestBatch {
        var batch = makeBatch(id: id, screen: screen, count: count, start: start, version: "3.1.0")
        for index in batch.events.indices {
            batch.events[index].hangs = [HangRecord(offset: 0.25, duration: duration + Double(index) / 100,
                                                    stack: HangStackFixtures.stack(site: site))]
        }
        return StoreContractTests.ingestBatch(batch)
    }

    /// One day-long hang whose dominant frame is `site` in the app's image (so it joins that
    /// site's group), sent under another image name and with a stack of its own, on a screen
    /// of its own.
    static func hostile(site: UInt64, start: Double) -> IngestBatch {
        let image = HangStack.Image(id: appId, name: "Call-support-at-evil.example", size: 1 << 20, app: true)
        let stack = HangStack(images: [image, HangStackFixtures.systemImage],
                              frames: [HangStack.Frame(image: 1, offset: 0x3_0000), HangStack.Frame(image: 0, offset: site),
                                       HangStack.Frame(image: 0, offset: 0x7777)],
                              samples: (0..<5).map { HangStack.Sample(at: Double($0) * 0.1, frames: [0, 1, 2]) })
        var batch = makeBatch(id: "evil", screen: "!Call support at evil.example", count: 1, start: start, version: "3.1.0")
        batch.events[0].duration = 86_400
        batch.events[0].hangs = [HangRecord(offset: 0.25, duration: 86_000, stack: stack)]
        return StoreContractTests.ingestBatch(batch)
    }

    static let all = EventQuery(screens: ScreenQuery(from: now - 86_400 * 3, to: now))

    @Test("Only limit groups are read when no symbols merge them, the groups with the most hang time; groups of images with symbols are all read",
          arguments: Kind.allCases)
    func limitRespected(_ kind: Kind) async throws {
        let (store, keepAlive) = try await kind.make()
        _ = try await store.createApp(name: "Shop", id: nil)
        // Twelve sites; site i has i + 1 hangs of 0.5 s: the later sites have the most time.
        let batches = (0..<12).map { Self.batch(id: "b\($0)", site: 0x1000 + UInt64($0) * 0x100, count: $0 + 1, duration: 0.5, start: Self.now - 7200) }
        _ = try await store.ingest(batches)
        let three = try await store.hangGroups(app: "shop", query: Self.all, source: .sdk, limit: 3, mergeable: [])
        #expect(three.map(\.hangs) == [12, 11, 10])
        #expect(three.map(\.signature) == [0x1b00, 0x1a00, 0x1900].map { HangSummary.signature(imageId: Self.appId, lookupOffset: $0 - 1) })
        #expect(try await store.hangGroups(app: "shop", query: Self.all, source: .sdk, limit: 1, mergeable: []).map(\.hangs) == [12])
        // The image has symbols: every group may merge with another, so all are read (up to the
        // most a merge reads), whatever limit asks; an unrelated image's symbols change nothing.
        #expect(try await store.hangGroups(app: "shop", query: Self.all, source: .sdk, limit: 1, mergeable: [Self.appId]).count == 12)
        #expect(try await store.hangGroups(app: "shop", query: Self.all, source: .sdk, limit: 1,
                                           mergeable: ["5307fcdea6d530a49e32df2420ec6a1b"]).map(\.hangs) == [12])
        _ = keepAlive
    }

    @Test("The hangs door asks the store for limit groups, and marks as mergeable exactly the images with uploaded symbols")
    func doorPassesLimit() async throws {
        let spy = HangReadSpy(uploaded: [])
        _ = try await CollectorQueries(store: spy).hangs(app: "shop", query: Self.all, limit: 3)
        #expect(await spy.calls.sorted { $0.source.rawValue < $1.source.rawValue }.map { "\($0.source.rawValue) \($0.limit) \($0.mergeable.count)" }
                == ["metrickit 3 0", "sdk 3 0"], "not the 1,000 read before issue 43")
        let withSymbols = HangReadSpy(uploaded: [SymbolImageRecord(id: Self.appId, name: "Shop", arch: "arm64", symbols: 3, uploadedAt: "")])
        _ = try await CollectorQueries(store: withSymbols).hangs(app: "shop", query: Self.all, limit: 1)
        #expect(await withSymbols.calls.allSatisfy { $0.limit == 1 && $0.mergeable == [Self.appId] })
    }

    @Test("A group's stack is the one most of its longest hangs share; with no two alike, the median, never the longest alone",
          arguments: Kind.allCases)
    func representativeStack(_ kind: Kind) async throws {
        let (store, keepAlive) = try await kind.make()
        _ = try await store.createApp(name: "Shop", id: nil)
        _ = try await store.ingest([Self.batch(id: "real", site: 0x215c, count: 6, duration: 0.5, start: Self.now - 7200),
                                    Self.hostile(site: 0x215c, start: Self.now - 3600)])
        let groups = try await store.hangGroups(app: "shop", query: Self.all, source: .sdk, limit: 10)
        let group = try #require(groups.first)
        #expect(groups.count == 1 && group.hangs == 7, "the hostile hang is counted in the group it joined")
        #expect(group.stack.map(\.offset) == [0x1_2340, 0x215c, 0x4000, 0x2_0000], "the six real hangs' stack, not the day-long one's")
        #expect(group.dominant?.image == "Shop")
        #expect(group.screens == ["Feed", "!Call support at evil.example"], "a screen one hang names comes after the screens of more hangs")
        _ = keepAlive
    }

    @Test("The rule itself: most common frame list (shares left out), then the median of equally common ones by their longest hang")
    func representativeRule() {
        func stored(_ site: UInt64, share: Double = 1) -> String {
            var summary = HangSummary(HangStackFixtures.stack(site: site))
            summary.stack = summary.stack.map { var frame = $0; frame.share = share; return frame }
            return HangRow(key: "", startedAt: 0, dimensionValues: [], tags: [:], duration: 1, fatal: false, source: .sdk, summary: summary).storedStack
        }
        let real = [HangCandidate(key: "a", duration: 2, storedStack: stored(0x215c, share: 0.8)),
                    HangCandidate(key: "b", duration: 1, storedStack: stored(0x215c, share: 0.6))]
        let longest = HangCandidate(key: "z", duration: 86_000, storedStack: stored(0x9990))
        #expect(HangGroup.representative(of: real + [longest]).map(\.offset).contains(0x215c), "two alike outvote one, whatever their shares")
        #expect(HangGroup.representative(of: [longest]).map(\.offset).contains(0x9990), "a group's only hang shows itself")
        let distinct = [longest, HangCandidate(key: "m", duration: 5, storedStack: stored(0x3000)),
                        HangCandidate(key: "s", duration: 0.3, storedStack: stored(0x5000))]
        #expect(HangGroup.representative(of: distinct).map(\.offset).contains(0x3000), "none alike: the median by length")
        #expect(HangGroup.representative(of: [longest, distinct[2]]).map(\.offset).contains(0x5000), "two unlike: the shorter middle one")
        #expect(HangGroup.representative(of: []).isEmpty)
    }

    @Test("An image name shown is the uploaded symbols' (verified) or marked as a device's; the Hangs page never says 'in' a device's name plainly")
    func imageNames() async throws {
        let store = try SQLiteStore(inMemoryWith: CardinalityLimits())
        _ = try await store.createApp(name: "Shop", id: "shop")
        // The hostile hang alone: its group shows its stack and name, marked as the device's.
        _ = try await store.ingest([Self.hostile(site: 0x215c, start: Self.now - 3600)])
        let queries = CollectorQueries(store: store)
        let unverified = try #require(try await queries.hangs(app: "shop", query: Self.all, limit: 10).groups.first?.dominant)
        #expect(unverified.image == "Call-support-at-evil.example" && !unverified.imageVerified)
        let pages = try DashboardPages(store: store)
        let page = try await pages.hangs(app: "shop", filters: DashboardFilters(parameters: ["days": "3"]), now: Self.now)
        #expect(page.contains("in “Call-support-at-evil.example”, a name devices sent (73d406b3…)"))
        #expect(!page.contains("in Call-support-at-evil.example"))
        #expect(page.contains("class=\"note unverified\""))

        // Symbols uploaded for the image: their name is shown, verified, in place of the device's.
        try await store.storeSymbols(app: "shop", images: [SymbolUploadTests.image], now: Self.now)
        let answer = try await CollectorQueries(store: store).hangs(app: "shop", query: Self.all, limit: 10)
        let verified = try #require(answer.groups.first?.dominant)
        #expect(verified.image == SymbolUploadTests.image.name && verified.imageVerified)
        #expect(answer.groups.first?.stack.filter { $0.imageId == Self.appId }.allSatisfy { $0.image == SymbolUploadTests.image.name } == true)
        let system = answer.groups.first?.stack.first { $0.imageId == HangStackFixtures.systemImage.id }
        #expect(system?.imageVerified == false, "an image without an upload stays the device's word")
    }

    @Test("The images without symbols are listed up to a bound and the rest counted, in the answer and on the page")
    func imagesWithoutSymbolsBounded() {
        let images = (0..<64).map { HangFrame(image: String(format: "Image%02d", $0), imageId: String(format: "%032x", $0 + 1), offset: 0x10,
                                              lookupOffset: 0xf, app: true, share: 1) }
        let group = HangGroup(signature: "s", hangs: 1, fatal: 0, duration: 1, screens: ["Feed"], appVersions: ["1"], firstSeen: 0, lastSeen: 0,
                              dominant: images[0], stack: images)
        let answer = HangsResponse(sdk: [group], metricKit: [])
        #expect(answer.imagesWithoutSymbols.count == HangsResponse.listedImages)
        #expect(answer.imagesWithoutSymbols.first?.name == "Image00" && answer.moreImagesWithoutSymbols == 64 - HangsResponse.listedImages)
        let notice = try? #require(DashboardPages.withoutSymbols(answer))
        #expect(notice?.hasSuffix("Image09 (00000000…) and 54 more") == true, "\(notice ?? "")")
        #expect((notice?.utf8.count ?? .max) < 400)
        #expect(DashboardPages.withoutSymbols(HangsResponse(sdk: [], metricKit: [])) == nil)
    }

    @Test("A group lists 20 screens and versions, those with the most hangs, and counts the rest; the page names 5")
    func groupListsBounded() {
        let screens = (0..<30).map { String(format: "Screen-%02d", $0) }
        let group = HangGroup(signature: "s", hangs: 30, fatal: 0, duration: 1, screens: screens, appVersions: ["3.1.0"], firstSeen: 0, lastSeen: 0,
                              dominant: nil, stack: [])
        let answer = try? #require(HangsResponse(sdk: [group], metricKit: []).groups.first)
        #expect(answer?.screens == Array(screens.prefix(HangsResponse.listedValues)) && answer?.moreScreens == 10)
        #expect(answer?.appVersions == ["3.1.0"] && answer?.moreAppVersions == 0)
        #expect(answer.map { DashboardPages.hangRow($0).screens } == "Screen-00, Screen-01, Screen-02, Screen-03, Screen-04 and 25 more")
        #expect(HangGroup.byHangs([StoredText("b"): 1, StoredText("a"): 1, StoredText("z"): 3]) == ["z", "a", "b"])
    }

    @Test("Sample rates: the answer lists the 100 with the most visits and counts the rest; the overview names 5")
    func sampleRatesBounded() {
        // 20,000 claimed rates of one visit each, and two real ones.
        var rates = (1...20_000).map { SampleRateVisits(partsPerMillion: $0, visits: 1) }
        rates += [SampleRateVisits(sampleRate: 0.1, visits: 5_000), SampleRateVisits(sampleRate: 1, visits: 900)]
        let answer = SampleRatesResponse(sampleRates: rates)
        #expect(answer.sampleRates.count == SampleRatesResponse.maximumRates)
        // Kept: the two real rates and the 98 lowest of the one-visit claims (ties go to the lower rate).
        #expect(answer.otherRates == 19_902 && answer.otherVisits == 19_902)
        #expect(answer.sampleRates.contains(SampleRateVisits(sampleRate: 0.1, visits: 5_000)))
        #expect(answer.sampleRates.map(\.sampleRate) == answer.sampleRates.map(\.sampleRate).sorted(), "by rate")
        let note = try? #require(DashboardPages.samplingNote(rates, filtered: false))
        #expect(note?.contains("10\u{202F}% (5\u{202F}000 visits)") == true)
        #expect(note?.contains("all installations (900 visits)") == true)
        #expect(note?.contains("and 19\u{202F}997 other rates (19\u{202F}997 visits)") == true, "\(note ?? "")")
        #expect((note?.utf8.count ?? .max) < 400)
        // Few rates: every one, nothing counted.
        #expect(SampleRatesResponse(sampleRates: Array(rates.suffix(2))).otherRates == 0)
    }

    @Test("The candidates' query reads the signature index, never the start index; the totals read the start index")
    func plans() async throws {
        let store = try SQLiteStore(inMemoryWith: CardinalityLimits())
        _ = try await store.createApp(name: "Shop", id: "shop")
        _ = try await store.ingest([Self.batch(id: "real", site: 0x215c, count: 6, duration: 0.5, start: Self.now - 7200)])
        var query = Self.all
        query.screens[.screen] = "Feed"
        let (filter, arguments) = SQLiteStore.hangFilter(query, source: .sdk, app: "shop")
        // EXPLAIN QUERY PLAN's rows are (id, parent, notused, detail): the detail is column 3.
        let candidateDetails = try await store.database.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + SQLiteStore.hangCandidatesSQL(filter: filter),
                             arguments: ["shop", "x"] + arguments + [16]).map { $0[3] as String }
        }
        let totalDetails = try await store.database.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + SQLiteStore.hangTotalsSQL(filter: filter, mergeable: false),
                             arguments: ["shop"] + arguments + ["[]", 10]).map { $0[3] as String }
        }
        #expect(candidateDetails.contains { $0.contains("USING INDEX hangs_by_signature") }, "\(candidateDetails)")
        #expect(!candidateDetails.contains { $0.contains("TEMP B-TREE") }, "longest first straight from the index: \(candidateDetails)")
        #expect(totalDetails.contains { $0.contains("USING INDEX hangs_by_app_start") }, "\(totalDetails)")
    }

    @Test("A hang read past its time bound is cancelled and answered 503 store_unavailable with Retry-After")
    func timeBound() async throws {
        // Work that never answers: it waits on a stream nothing ever yields to, until cancelled.
        let (never, held) = AsyncStream<Int>.makeStream()
        defer { held.finish() }
        do {
            _ = try await CollectorQueries.within(seconds: 0.05) { () async throws -> Int in
                for await value in never { return value }
                try Task.checkCancellation()
                return 1
            }
            Issue.record("a read past its bound answered")
        } catch let error as StoreError {
            // The store's error; the collector answers it (StoreError+Response.swift).
            #expect(error == .readTookTooLong(what: "the hangs of this range", seconds: 1))
            let answer = error.collectorError
            #expect(answer.status == .serviceUnavailable && answer.code == "store_unavailable" && answer.headers[.retryAfter] == "1")
        }
        #expect(try await CollectorQueries.within(seconds: 60) { 7 } == 7)
    }
}

/// A store with no hangs that records how the hangs door asked for them.
struct HangReadSpy: CollectorQueries.Store {
    actor Calls {
        var list: [(source: HangSource, limit: Int, mergeable: Set<String>)] = []
        func add(_ source: HangSource, _ limit: Int, _ mergeable: Set<String>) { list.append((source, limit, mergeable)) }
    }
    let recorded = Calls()
    let uploaded: [SymbolImageRecord]
    var calls: [(source: HangSource, limit: Int, mergeable: Set<String>)] { get async { await recorded.list } }

    func hangGroups(app: String, query: EventQuery, source: HangSource, limit: Int, mergeable: Set<String>) async throws -> [HangGroup] {
        await recorded.add(source, limit, mergeable)
        return []
    }
    func symbolImages(app: String) async throws -> [SymbolImageRecord] { uploaded }
    func aggregate(app: String, query: AggregateQuery) async throws -> [RollupAggregate] { [] }
    func dimensionValues(app: String, dimension: QueryDimension, from: Double, to: Double) async throws -> [String] { [] }
    func tagValues(app: String, key: String, from: Double, to: Double) async throws -> [String] { [] }
    func tagKeys(app: String) async throws -> [DeclaredTagKey]? { nil }
    func declareTagKey(app: String, key: String, now: Double) async throws -> Bool? { nil }
    func removeTagKey(app: String, key: String) async throws -> Bool { false }
    func thresholds(app: String) async throws -> AppThresholds? { nil }
    func setThresholds(_ thresholds: AppThresholds, app: String) async throws -> Bool { false }
    func storeMetricKit(app: String, records: [MetricKitRecord]) async throws -> Int { 0 }
    func metricKitVersions(app: String, query: ScreenQuery) async throws -> [MetricKitVersionSummary] { [] }
    func deleteMetricKitPayloads(endedBefore cutoff: Double, limit: Int) async throws -> Int { 0 }
    func hangCount(app: String) async throws -> Int { 0 }
    func deleteHangs(startedBefore cutoff: Double, limit: Int) async throws -> Int { 0 }
    func storeSymbols(app: String, images: consuming [SymbolUpload.Image], now: Double) async throws {}
    func symbolTables(app: String, ids: Set<String>) async throws -> [String: SymbolTableBlob] { [:] }
    func sampleRates(app: String, from: Double, to: Double) async throws -> [SampleRateVisits] { [] }
    func deleteSampleRates(before cutoff: Double) async throws -> Int { 0 }
}
