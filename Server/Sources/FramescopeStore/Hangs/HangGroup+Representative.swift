import FramescopeCore

/// One hang a store offers as a group's representative: its key, length and stored stack.
public struct HangCandidate: Sendable, Hashable {
    /// The hang's key (``HangRow/key``), unique per app.
    public var key: String
    /// How long it lasted, in seconds.
    public var duration: Double
    /// Its representative stack as stored (``HangRow/storedStack``).
    public var storedStack: String

    /// Creates a candidate.
    public init(key: String, duration: Double, storedStack: String) {
        self.key = key
        self.duration = duration
        self.storedStack = storedStack
    }
}

extension HangGroup {
    /// How many of a group's longest hangs a store offers as candidates for the stack the
    /// group shows (``representative(of:)``): enough that one hang is outvoted, few enough
    /// that a group costs at most this many stacks read (through the signature index).
    public static let candidateCount = 16

    /// The stack a group shows, chosen so that one hang cannot replace it (issue 43, item 5):
    /// among `candidates` (a group's ``candidateCount`` longest hangs), the frame list (each
    /// frame's image id and offset, shares left out) the most of them share; among frame
    /// lists shared equally often, the one whose longest hang is the median of theirs (the
    /// shorter middle one of an even count), so that neither the longest hang (a day-long
    /// invented one) nor the shortest decides. Its stack is that of its longest hang (then
    /// the least key). Empty for no candidates.
    ///
    /// A single hang at a real group's dominant frame therefore shows only when it is the
    /// group's only hang, or when no two of the others agree and it is the median.
    /// - Complexity: O(candidates × frames).
    public static func representative(of candidates: [HangCandidate]) -> [HangFrame] {
        let ordered = candidates.sorted { ($1.duration, $0.key) < ($0.duration, $1.key) }
        var order: [[FrameKey]] = []
        var byFrames: [[FrameKey]: (count: Int, first: HangCandidate, stack: [HangFrame])] = [:]
        for candidate in ordered {
            let stack = stack(stored: candidate.storedStack)
            let frames = stack.map { FrameKey(imageId: $0.imageId, offset: $0.offset) }
            if let known = byFrames[frames] {
                byFrames[frames] = (known.count + 1, known.first, known.stack)
            } else {
                byFrames[frames] = (1, candidate, stack)
                order.append(frames)
            }
        }
        let most = byFrames.values.map(\.count).max() ?? 0
        // Longest first (the order they were met in), so the median is an index.
        let tied = order.filter { byFrames[$0]?.count == most }
        guard !tied.isEmpty else { return [] }
        return byFrames[tied[tied.count / 2]]?.stack ?? []
    }

    /// A frame's place, for comparing stacks without their shares.
    private struct FrameKey: Hashable {
        var imageId: String
        var offset: UInt64
    }
}

extension HangGroup {
    /// The texts of `counts` (hangs per screen or version), those with the most hangs first,
    /// then in byte order: a screen one hang names comes after every screen more hangs name.
    public static func byHangs(_ counts: [StoredText: Int]) -> [String] {
        counts.map { (text: $0.key, hangs: $0.value) }
            .sorted { ($1.hangs, $0.text) < ($0.hangs, $1.text) }
            .map(\.text.text)
    }
}
