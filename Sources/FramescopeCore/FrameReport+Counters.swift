/// The report's counters, listed once: every codec that stores a report field by field
/// (the binary form, ``FrameReport/StoredSums``, the ClickHouse store's columns) iterates
/// ``FrameReport/counters`` instead of naming each counter itself.
extension FrameReport {
    /// One of a report's mergeable whole-number fields, with a permanent storage id.
    ///
    /// The id is like a protobuf field number: it names the counter in stored layouts
    /// (the ClickHouse store's column layout refers to counters by it) and never changes or
    /// gets reused, whatever the counter's name or place in the code becomes.
    public struct Counter: Sendable, Hashable, CustomStringConvertible {
        /// How a counter's values combine and how wide they are.
        public enum Kind: Sendable, Hashable {
            /// A count (frames, events, ticks) that adds when reports merge.
            case count
            /// A count whose merge keeps the larger of the two (``FrameReport/maxDroppedFrames``).
            case maximum
            /// A total in nanoseconds (``NanosecondTotal``, up to 128 bits) that adds when
            /// reports merge.
            case nanoseconds
        }

        /// The field a counter is, in a report and in its stored sums.
        enum Field: Sendable {
            case frames, durationNanoseconds, firstFrames, firstDurationNanoseconds, droppedFrames, dropEvents, maxDroppedFrames
            case hitchTimeNanoseconds, hangs, hangTimeNanoseconds, slowFrames, frozenFrames, rejectedTicks
        }

        /// The permanent storage id, 1 or more.
        public let id: Int
        /// The field's name (``FrameReport/frames``: `frames`).
        public let name: String
        /// How values combine and how wide they are.
        public let kind: Kind
        let field: Field

        private init(id: Int, name: String, kind: Kind, field: Field) {
            self.id = id
            self.name = name
            self.kind = kind
            self.field = field
        }

        /// Counters are equal when their storage ids are.
        public static func == (lhs: Counter, rhs: Counter) -> Bool { lhs.id == rhs.id }

        /// Hashes the storage id.
        public func hash(into hasher: inout Hasher) { hasher.combine(id) }

        /// The name and the storage id: `frames (1)`.
        public var description: String { "\(name) (\(id))" }

        /// ``FrameReport/frames``: measured frame intervals.
        public static let frames = Counter(id: 1, name: "frames", kind: .count, field: .frames)
        /// ``FrameReport/durationNanoseconds``: Σ frame duration, nanoseconds.
        public static let durationNanoseconds = Counter(id: 2, name: "durationNanoseconds", kind: .nanoseconds,
                                                        field: .durationNanoseconds)
        /// ``FrameReport/firstFrames``: first intervals after a start, resume or screen change.
        public static let firstFrames = Counter(id: 3, name: "firstFrames", kind: .count, field: .firstFrames)
        /// ``FrameReport/firstDurationNanoseconds``: Σ duration of the first intervals, nanoseconds.
        public static let firstDurationNanoseconds = Counter(id: 4, name: "firstDurationNanoseconds", kind: .nanoseconds,
                                                             field: .firstDurationNanoseconds)
        /// ``FrameReport/droppedFrames``: Σ dropped frames over all intervals.
        public static let droppedFrames = Counter(id: 5, name: "droppedFrames", kind: .count, field: .droppedFrames)
        /// ``FrameReport/dropEvents``: intervals that dropped at least one frame.
        public static let dropEvents = Counter(id: 6, name: "dropEvents", kind: .count, field: .dropEvents)
        /// ``FrameReport/maxDroppedFrames``: the most frames dropped in one interval.
        public static let maxDroppedFrames = Counter(id: 7, name: "maxDroppedFrames", kind: .maximum, field: .maxDroppedFrames)
        /// ``FrameReport/hitchTimeNanoseconds``: Σ lateness, nanoseconds.
        public static let hitchTimeNanoseconds = Counter(id: 8, name: "hitchTimeNanoseconds", kind: .nanoseconds,
                                                         field: .hitchTimeNanoseconds)
        /// ``FrameReport/hangs``: frames at least as long as the hang threshold.
        public static let hangs = Counter(id: 9, name: "hangs", kind: .count, field: .hangs)
        /// ``FrameReport/hangTimeNanoseconds``: Σ duration of the hang frames, nanoseconds.
        public static let hangTimeNanoseconds = Counter(id: 10, name: "hangTimeNanoseconds", kind: .nanoseconds,
                                                        field: .hangTimeNanoseconds)
        /// ``FrameReport/slowFrames``: frames that missed a refresh and are shorter than the frozen threshold.
        public static let slowFrames = Counter(id: 11, name: "slowFrames", kind: .count, field: .slowFrames)
        /// ``FrameReport/frozenFrames``: frames at least as long as the frozen threshold.
        public static let frozenFrames = Counter(id: 12, name: "frozenFrames", kind: .count, field: .frozenFrames)
        /// ``FrameReport/rejectedTicks``: ticks the analyzer refused.
        public static let rejectedTicks = Counter(id: 13, name: "rejectedTicks", kind: .count, field: .rejectedTicks)
    }

    /// Every counter, in the binary form's order. Append-only.
    ///
    /// To add a counter: give it the next storage id, append it here, and then
    /// - the binary form carries it after ``Counter/rejectedTicks`` (a new
    ///   ``binaryVersion``, whose decoder still reads version 1's thirteen counters);
    /// - ``StoredSums`` needs the field;
    /// - the ClickHouse store's arrays carry it only once a new layout version appends its
    ///   elements (`VisitColumns.Layout`, docs/dev-notes/clickhouse-schema.md).
    ///
    /// Never reorder, remove or renumber: the order is the binary form's and the ids are
    /// stored.
    public static let counters: [Counter] = [
        .frames, .durationNanoseconds, .firstFrames, .firstDurationNanoseconds, .droppedFrames, .dropEvents, .maxDroppedFrames,
        .hitchTimeNanoseconds, .hangs, .hangTimeNanoseconds, .slowFrames, .frozenFrames, .rejectedTicks,
    ]

    /// The counter with storage id `id`, or `nil` when none has it.
    /// - Complexity: O(*n*) in the number of counters.
    public static func counter(id: Int) -> Counter? {
        counters.first { $0.id == id }
    }

    /// The value of a ``Counter/Kind/count`` or ``Counter/Kind/maximum`` counter.
    /// - Precondition: `counter` is not a nanosecond total.
    public internal(set) subscript(count counter: Counter) -> Int {
        get { self[countField: counter.field] }
        set { self[countField: counter.field] = newValue }
    }

    /// The value of a ``Counter/Kind/nanoseconds`` counter, nanoseconds.
    /// - Precondition: `counter` is a nanosecond total.
    public internal(set) subscript(nanoseconds counter: Counter) -> NanosecondTotal {
        get { self[nanosecondField: counter.field] }
        set { self[nanosecondField: counter.field] = newValue }
    }
}

extension FrameReport.StoredSums {
    /// The value of a ``FrameReport/Counter/Kind/count`` or
    /// ``FrameReport/Counter/Kind/maximum`` counter.
    /// - Precondition: `counter` is not a nanosecond total.
    public subscript(count counter: FrameReport.Counter) -> Int {
        get { self[countField: counter.field] }
        set { self[countField: counter.field] = newValue }
    }

    /// The value of a ``FrameReport/Counter/Kind/nanoseconds`` counter, nanoseconds.
    /// - Precondition: `counter` is a nanosecond total.
    public subscript(nanoseconds counter: FrameReport.Counter) -> NanosecondTotal {
        get { self[nanosecondField: counter.field] }
        set { self[nanosecondField: counter.field] = newValue }
    }
}

/// The counters' fields by name, shared by ``FrameReport`` and ``FrameReport/StoredSums``:
/// one switch from a ``FrameReport/Counter`` to its field (a switch, not key paths: a key
/// path read costs about 50 ns, ten times the binary decoder's work per counter).
protocol ReportCounterFields {
    var frames: Int { get set }
    var durationNanoseconds: NanosecondTotal { get set }
    var firstFrames: Int { get set }
    var firstDurationNanoseconds: NanosecondTotal { get set }
    var droppedFrames: Int { get set }
    var dropEvents: Int { get set }
    var maxDroppedFrames: Int { get set }
    var hitchTimeNanoseconds: NanosecondTotal { get set }
    var hangs: Int { get set }
    var hangTimeNanoseconds: NanosecondTotal { get set }
    var slowFrames: Int { get set }
    var frozenFrames: Int { get set }
    var rejectedTicks: Int { get set }
}

extension ReportCounterFields {
    /// A count field's value.
    subscript(countField field: FrameReport.Counter.Field) -> Int {
        get {
            switch field {
            case .frames: frames
            case .firstFrames: firstFrames
            case .droppedFrames: droppedFrames
            case .dropEvents: dropEvents
            case .maxDroppedFrames: maxDroppedFrames
            case .hangs: hangs
            case .slowFrames: slowFrames
            case .frozenFrames: frozenFrames
            case .rejectedTicks: rejectedTicks
            case .durationNanoseconds, .firstDurationNanoseconds, .hitchTimeNanoseconds, .hangTimeNanoseconds:
                preconditionFailure("\(field) is a nanosecond total")
            }
        }
        set {
            switch field {
            case .frames: frames = newValue
            case .firstFrames: firstFrames = newValue
            case .droppedFrames: droppedFrames = newValue
            case .dropEvents: dropEvents = newValue
            case .maxDroppedFrames: maxDroppedFrames = newValue
            case .hangs: hangs = newValue
            case .slowFrames: slowFrames = newValue
            case .frozenFrames: frozenFrames = newValue
            case .rejectedTicks: rejectedTicks = newValue
            case .durationNanoseconds, .firstDurationNanoseconds, .hitchTimeNanoseconds, .hangTimeNanoseconds:
                preconditionFailure("\(field) is a nanosecond total")
            }
        }
    }

    /// A nanosecond total's value, nanoseconds.
    subscript(nanosecondField field: FrameReport.Counter.Field) -> NanosecondTotal {
        get {
            switch field {
            case .durationNanoseconds: durationNanoseconds
            case .firstDurationNanoseconds: firstDurationNanoseconds
            case .hitchTimeNanoseconds: hitchTimeNanoseconds
            case .hangTimeNanoseconds: hangTimeNanoseconds
            case .frames, .firstFrames, .droppedFrames, .dropEvents, .maxDroppedFrames, .hangs, .slowFrames, .frozenFrames, .rejectedTicks:
                preconditionFailure("\(field) is not a nanosecond total")
            }
        }
        set {
            switch field {
            case .durationNanoseconds: durationNanoseconds = newValue
            case .firstDurationNanoseconds: firstDurationNanoseconds = newValue
            case .hitchTimeNanoseconds: hitchTimeNanoseconds = newValue
            case .hangTimeNanoseconds: hangTimeNanoseconds = newValue
            case .frames, .firstFrames, .droppedFrames, .dropEvents, .maxDroppedFrames, .hangs, .slowFrames, .frozenFrames, .rejectedTicks:
                preconditionFailure("\(field) is not a nanosecond total")
            }
        }
    }
}

extension FrameReport: ReportCounterFields {}
extension FrameReport.StoredSums: ReportCounterFields {}
