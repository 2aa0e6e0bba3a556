import FramescopeCore

/// One group-commit flush's ingest, planned as a value: which batches are stored and which
/// are duplicates, each stored event's dimension and declared-tag values as admitted, the
/// values the cardinality ledger must write back, and one ``IngestResult`` per batch.
///
/// A store loads what ``IngestPlanner`` needs (the batch ids its ledger holds, the apps'
/// declared tags, a ``CardinalityLedger`` loaded for ``IngestPlanner/ledgerKeys(for:declaredTags:limits:)``
/// and ``IngestPlanner/windowCandidates(for:declaredTags:ledger:)``), asks for the plan,
/// and writes it in its own form (rows and rollups on SQLite, RowBinary on ClickHouse).
public struct IngestPlan: Sendable {
    /// One event of a stored batch, with the values it is stored and rolled up under.
    public struct Event: Sendable {
        /// Its place in the batch (and in ``IngestBatch/rawEvents``).
        public var index: Int
        /// Every ``QueryDimension``'s value, in registry order, as admitted.
        public var dimensionValues: [String]
        /// The values of the batch's ``Batch/tagKeys``, in that order, as admitted.
        public var tagValues: [String]
    }

    /// One fatal hang of a stored batch, with the values it is stored under.
    public struct FatalHang: Sendable {
        /// Its place in ``IngestBatch/fatalHangs``.
        public var index: Int
        /// Every ``QueryDimension``'s value, in registry order, as admitted.
        public var dimensionValues: [String]
    }

    /// A batch to store.
    public struct Batch: Sendable {
        /// The batch.
        public var batch: IngestBatch
        /// Its app's declared tag keys, in the order the store lists them.
        public var tagKeys: [String]
        /// Its events, in order.
        public var events: [Event]
        /// Its fatal hangs, in order.
        public var fatalHangs: [FatalHang] = []
    }

    /// The batches to store, in the flush's order (duplicates left out).
    public var stored: [Batch]
    /// One result per batch of the flush, in order: stored (with what it folded) or a duplicate.
    public var results: [IngestResult]
    /// The values admitted that were new for their day, in order: what the store writes
    /// back to its cardinality ledger.
    public var admitted: [(key: CardinalityLedger.Key, value: String)]
}

/// Plans a flush (``IngestPlan``) from what a store loaded; reads and writes nothing.
///
/// The rules: a batch id already in the store's ledger, or earlier in the flush, for its
/// app is a duplicate and stores nothing. Every other batch stores all its events; each
/// event's dimension values, then its declared tags' values, pass the cardinality ledger in
/// order (values past a limit fold into ``CardinalityLimits/other``), and its result
/// counts what it folded.
public enum IngestPlanner {
    /// The UTC day (its start, Unix seconds) an event that started at `startedAt` counts on;
    /// 0 for a start no store keeps (not finite, or beyond what `Int64` seconds hold), which
    /// a store refuses or validation did before.
    public static func day(of startedAt: Double) -> Int64 {
        guard startedAt.isFinite, abs(startedAt) < 9e15 else { return 0 }
        return RollupLevel.floor(Int64(startedAt.rounded(.down)), to: 86_400)
    }

    /// The plan of `batches`.
    /// - Parameters:
    ///   - known: The (app, batch id) pairs the store's ledger holds already.
    ///   - declaredTags: Each app's declared tag keys (an app missing has none).
    ///   - ledger: The cardinality ledger, loaded for the flush.
    /// - Complexity: O(events × (dimensions + declared tags)).
    public static func plan(_ batches: [IngestBatch], known: Set<[String]>, declaredTags: [String: [String]],
                            ledger: CardinalityLedger) -> IngestPlan {
        var ledger = ledger
        var seen: Set<[String]> = []
        var plan = IngestPlan(stored: [], results: [], admitted: [])
        for batch in batches {
            let id = [batch.app, batch.batchId]
            if seen.contains(id) || known.contains(id) {
                plan.results.append(IngestResult(stored: 0, duplicate: true))
                continue
            }
            seen.insert(id)
            let tagKeys = declaredTags[batch.app] ?? []
            let foldedBefore = ledger.folded[batch.app] ?? [:]
            var events: [IngestPlan.Event] = []
            events.reserveCapacity(batch.events.count)
            for (index, (event, startedAt)) in batch.events.enumerated() {
                let day = Self.day(of: startedAt)
                let facts = batch.facts(of: event)
                var values: [String] = []
                values.reserveCapacity(QueryDimension.all.count)
                for dimension in QueryDimension.all {
                    values.append(ledger.admit(dimension.read(facts), app: batch.app, day: day, dimension: dimension))
                }
                let tagValues = tagKeys.map { key in
                    ledger.admit(tagValue: DeclaredTags.value(of: key, in: event.context.tags), app: batch.app, day: day, tagKey: key)
                }
                events.append(IngestPlan.Event(index: index, dimensionValues: values, tagValues: tagValues))
            }
            // A fatal hang's values pass the gate as a visit's do (no declared tags: it adds
            // to no rollup).
            let fatalHangs = batch.fatalHangs.enumerated().map { index, fatal in
                let facts = batch.facts(of: fatal.event)
                let day = Self.day(of: fatal.startedAt)
                return IngestPlan.FatalHang(index: index, dimensionValues: QueryDimension.all.map {
                    ledger.admit($0.read(facts), app: batch.app, day: day, dimension: $0)
                })
            }
            plan.stored.append(IngestPlan.Batch(batch: batch, tagKeys: tagKeys, events: events, fatalHangs: fatalHangs))
            plan.results.append(IngestResult(stored: batch.events.count + batch.fatalHangs.count, duplicate: false,
                                             folded: ledger.folded(app: batch.app, since: foldedBefore)))
        }
        plan.admitted = ledger.admitted
        return plan
    }

    /// The ledger keys (app, day, dimension or `tag.KEY`) whose known values the plan of
    /// `batches` may ask about: every gated dimension and declared tag on every day their
    /// events start.
    public static func ledgerKeys(for batches: [IngestBatch], declaredTags: [String: [String]], limits: CardinalityLimits) -> Set<CardinalityLedger.Key> {
        let gated = QueryDimension.all.filter { limits.limit($0) != nil }.map(\.queryName)
        var keys: Set<CardinalityLedger.Key> = []
        for batch in batches {
            let tagNames = (declaredTags[batch.app] ?? []).map { DeclaredTags.parameterPrefix + $0 }
            for (_, startedAt, tags) in batch.gated {
                let day = Self.day(of: startedAt)
                for name in gated + (tags == nil ? [] : tagNames) { keys.insert(CardinalityLedger.Key(app: batch.app, day: day, name: name)) }
            }
        }
        return keys
    }

    /// Per app and dimension (or `tag.KEY`) with a window limit, the values of `batches` not
    /// known for their day in `ledger` (loaded for ``ledgerKeys(for:declaredTags:limits:)``)
    /// on a day with room left under the daily limit: the values whose window membership,
    /// and the window's count, the plan may need (a value on a day already full folds
    /// without a look at the window).
    public static func windowCandidates(for batches: [IngestBatch], declaredTags: [String: [String]],
                                        ledger: CardinalityLedger) -> [String: [String: Set<StoredText>]] {
        let windowed = QueryDimension.all.filter { ledger.limits.windowLimit($0) != nil }
        var needed: [String: [String: Set<StoredText>]] = [:]
        for batch in batches {
            let tagKeys = declaredTags[batch.app] ?? []
            for (facts, startedAt, tags) in batch.gated {
                let day = Self.day(of: startedAt)
                var values = windowed.map { ($0.queryName, $0.read(facts), ledger.limits.limit($0) ?? 0) }
                if let tags {
                    values += tagKeys.map { (DeclaredTags.parameterPrefix + $0, DeclaredTags.value(of: $0, in: tags), DeclaredTags.defaultDailyValueLimit) }
                }
                for (name, value, limit) in values {
                    let key = CardinalityLedger.Key(app: batch.app, day: day, name: name)
                    guard !ledger.isKnown(value, for: key), ledger.knownCount(for: key) < limit else { continue }
                    needed[batch.app, default: [:]][name, default: []].insert(StoredText(value))
                }
            }
        }
        return needed
    }
}
