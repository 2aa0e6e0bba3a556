import FramescopeCore

/// One frame of a hang's representative stack, as the collector keeps and answers it.
public struct HangFrame: Sendable, Hashable, Codable {
    /// The image's file name (`Shop`, `UIKitCore`).
    public var image: String
    /// The image's build identity (lowercase hex: a UUID or a build id).
    public var imageId: String
    /// Bytes from the image's base to the instruction or return address.
    public var offset: UInt64
    /// The offset a symbol table is asked for: ``offset`` for the interrupted instruction,
    /// one byte less for a return address (``HangStack/Frame/lookupOffset(isFirst:)``).
    public var lookupOffset: UInt64
    /// Whether the image is the app's own code.
    public var app: Bool
    /// The share of the hang's samples in which this frame appears, 0 to 1.
    public var share: Double

    /// Creates a frame.
    public init(image: String, imageId: String, offset: UInt64, lookupOffset: UInt64, app: Bool, share: Double) {
        self.image = image
        self.imageId = imageId
        self.offset = offset
        self.lookupOffset = lookupOffset
        self.app = app
        self.share = share
    }
}

/// What the collector keeps of one hang's samples: where it happened (its signature, from
/// the dominant app frame) and one stack to show for it.
///
/// The **dominant app frame** is the deepest place in the app's own images that more
/// than half the samples hold: the slow code itself, below the callers every sample also
/// holds (`main`, the view controller's entry), and never a frame one sample happened to
/// catch. When no place is in more than half the samples (they disagree), it is the
/// deepest of those in the most samples. Depth is counted from the stack's root, so it
/// does not change with how deep each sample's leaf was; ties go to the place in more
/// samples, then to the lower offset, then to the earlier image. A place is a frame, or,
/// for an instruction the app was interrupted at, the function called at its caller's call
/// site (see ``init(_:)``): an app computing in one function moves its instruction from
/// sample to sample, never its call site.
///
/// Hangs with the same signature are one group. Without symbols the signature is the
/// frame itself, `<image id>+0x<offset>`, the same on every device of a build whatever
/// its load address; the collector maps it to a function when the build's symbols arrive.
public struct HangSummary: Sendable, Hashable {
    /// The group key: `<image id>+0x<lookup offset in hex>`, or ``noAppFrame`` /
    /// ``noStack``.
    public var signature: String
    /// The dominant app frame, or `nil` when no sample has an app frame.
    public var dominant: HangFrame?
    /// The representative stack, innermost first: the most frequent sample among those
    /// holding the dominant frame (any sample when there is none), each frame with its
    /// share of the hang's samples.
    public var stack: [HangFrame]
    /// How many samples the hang had.
    public var samples: Int

    /// The signature of a hang whose samples hold no frame of the app's images (all in the
    /// system's code: a synchronous system call the app made, seen from below).
    public static let noAppFrame = "(no app frame)"
    /// The signature of a hang sent without a stack (an SDK that does not sample, or none taken).
    public static let noStack = "(no stack)"

    /// The summary of a hang without a stack.
    public static let withoutStack = HangSummary(signature: noStack, dominant: nil, stack: [], samples: 0)

    /// Creates a summary.
    public init(signature: String, dominant: HangFrame?, stack: [HangFrame], samples: Int) {
        self.signature = signature
        self.dominant = dominant
        self.stack = stack
        self.samples = samples
    }

    /// The summary of `stack`, a stack that passed ingest's checks (indices in range).
    ///
    /// The majority is counted per *place*, not per address: a sample's interrupted
    /// instruction in the app's code counts as "the function its caller's call site called"
    /// (the next frame's return address), since the instruction moves from sample to sample
    /// while the app computes and the call site does not. Every other frame counts as
    /// itself. When such a place dominates, the dominant frame is its most frequent
    /// instruction (the lowest on a tie): any of them names the same function once the
    /// build's symbols are there.
    ///
    /// Where `symbols` hold the table of an app image (by image id), its frames count per
    /// function instead: every sample in a function, at whatever instruction or call site,
    /// and in whichever of the compiler's clones of it (``CloneNote``), counts for that
    /// function, and the function's most frequent frame stands for it.
    /// - Complexity: O(samples × depth × log symbols).
    public init(_ stack: HangStack, symbols: [String: SymbolTableBlob] = [:]) {
        let frameCount = stack.frames.count
        func isApp(_ frame: Int) -> Bool {
            let image = stack.frames[frame].image
            return stack.images.indices.contains(image) && stack.images[image].app
        }
        /// Where a sample is: a frame, or (for app code interrupted) the callee of a call site.
        enum Place: Hashable {
            case frame(Int)
            case calledFrom(Int)
            case function(image: Int, name: String)
        }
        // Whether a frame is only ever the interrupted instruction (looked up where it is), and
        // each app frame's function where the image's symbols are known.
        var function = [String?](repeating: nil, count: frameCount)
        var isLeafOnly = [Bool](repeating: true, count: frameCount)
        // Plain index loops over the samples: up to 50 × 256 positions a stack and 32 stacks
        // a visit, where `enumerated()` and `indices.contains` cost a generic call each in a
        // debug build (issue 43, item 1).
        for sample in stack.samples {
            let frames = sample.frames
            var position = 1
            while position < frames.count {
                let frame = frames[position]
                if frame >= 0, frame < frameCount { isLeafOnly[frame] = false }
                position += 1
            }
        }
        if !symbols.isEmpty {
            for (index, frame) in stack.frames.enumerated() where isApp(index) {
                guard let table = symbols[stack.images[frame.image].id] else { continue }
                // By function: a clone's notes dropped (`decode [clone .cold]` is `decode`).
                function[index] = table.name(at: frame.lookupOffset(isFirst: isLeafOnly[index])).map(CloneNote.function(of:))
            }
        }
        var functionFrames: [Place: [Int: Int]] = [:]  // function place → frame → samples
        var sampleCount = [Int](repeating: 0, count: frameCount)
        var lastCounted = [Int](repeating: -1, count: frameCount)
        var leafFrames: [Int: [Int: Int]] = [:]  // caller frame → interrupted app frame → samples
        // Places are counted by number in arrays, not by hashing a `Place` at every position:
        // frame f is f, the callee called from frame c is frameCount + c, and the function of
        // frame f (when symbols name it) is 2 × frameCount + its index in `functionPlaces`.
        var isAppFrame = [Bool](repeating: false, count: frameCount)
        var functionOfFrame = [Int](repeating: -1, count: frameCount)
        var functionPlaces: [Place] = []
        var functionNumbers: [Place: Int] = [:]
        for frame in 0..<frameCount {
            isAppFrame[frame] = isApp(frame)
            guard isAppFrame[frame], let name = function[frame] else { continue }
            let place = Place.function(image: stack.frames[frame].image, name: name)
            if let known = functionNumbers[place] {
                functionOfFrame[frame] = known
            } else {
                functionOfFrame[frame] = functionPlaces.count
                functionNumbers[place] = functionPlaces.count
                functionPlaces.append(place)
            }
        }
        let placeCount = 2 * frameCount + functionPlaces.count
        var samplesOfPlace = [Int](repeating: 0, count: placeCount)
        var depthOfPlace = [Int](repeating: -1, count: placeCount)
        var lastSampleOfPlace = [Int](repeating: -1, count: placeCount)
        var sampleIndex = 0
        for sample in stack.samples {
            let frames = sample.frames
            let depth = frames.count
            var position = 0
            while position < depth {
                let frame = frames[position]
                position += 1
                guard frame >= 0, frame < frameCount else { continue }
                if lastCounted[frame] != sampleIndex {
                    lastCounted[frame] = sampleIndex
                    sampleCount[frame] += 1
                }
                guard isAppFrame[frame] else { continue }
                var place = frame
                if functionOfFrame[frame] >= 0 {
                    place = 2 * frameCount + functionOfFrame[frame]
                    functionFrames[functionPlaces[functionOfFrame[frame]], default: [:]][frame, default: 0] += 1
                } else if position == 1, depth > 1, frames[1] >= 0, frames[1] < frameCount {
                    place = frameCount + frames[1]
                    leafFrames[frames[1], default: [:]][frame, default: 0] += 1
                }
                if lastSampleOfPlace[place] != sampleIndex {
                    lastSampleOfPlace[place] = sampleIndex
                    samplesOfPlace[place] += 1
                }
                // Depth from the root: the position read is `position - 1`.
                depthOfPlace[place] = max(depthOfPlace[place], depth - position)
            }
            sampleIndex += 1
        }
        var placeSamples: [Place: Int] = [:]
        var placeDepth: [Place: Int] = [:]
        for number in 0..<placeCount where samplesOfPlace[number] > 0 {
            let place: Place = number < frameCount ? .frame(number)
                : number < 2 * frameCount ? .calledFrom(number - frameCount) : functionPlaces[number - 2 * frameCount]
            placeSamples[place] = samplesOfPlace[number]
            placeDepth[place] = depthOfPlace[number]
        }
        /// The frame that stands for a place: itself, or the callee's most frequent instruction.
        func representative(_ place: Place) -> Int {
            switch place {
            case let .frame(frame): return frame
            case .calledFrom, .function:
                let frames: [Int: Int]
                if case let .calledFrom(caller) = place { frames = leafFrames[caller] ?? [:] } else { frames = functionFrames[place] ?? [:] }
                let fallback: Int
                if case let .calledFrom(caller) = place { fallback = caller } else { fallback = frames.keys.first ?? 0 }
                return frames.min { a, b in
                    (-a.value, stack.frames[a.key].offset, stack.frames[a.key].image)
                        < (-b.value, stack.frames[b.key].offset, stack.frames[b.key].image)
                }?.key ?? fallback
            }
        }
        let places = Array(placeSamples.keys)
        let most = places.map { placeSamples[$0] ?? 0 }.max() ?? 0
        let majority = places.filter { 2 * (placeSamples[$0] ?? 0) > stack.samples.count }
        let candidates = majority.isEmpty ? places.filter { placeSamples[$0] == most } : majority
        let best = candidates.map { ($0, representative($0)) }.min { a, b in
            let (pa, fa) = a
            let (pb, fb) = b
            return (-(placeDepth[pa] ?? 0), -(placeSamples[pa] ?? 0), stack.frames[fa].offset, stack.frames[fa].image)
                < (-(placeDepth[pb] ?? 0), -(placeSamples[pb] ?? 0), stack.frames[fb].offset, stack.frames[fb].image)
        }?.1
        let total = max(1, stack.samples.count)
        func described(_ frame: Int) -> HangFrame? {
            let location = stack.frames[frame]
            guard stack.images.indices.contains(location.image) else { return nil }
            let image = stack.images[location.image]
            return HangFrame(image: image.name, imageId: image.id, offset: location.offset,
                             lookupOffset: location.lookupOffset(isFirst: isLeafOnly[frame]), app: image.app,
                             share: Double(sampleCount[frame]) / Double(total))
        }
        // The representative sample: the most frequent frame list among the samples that
        // hold the dominant frame (all samples without one); on a tie, the first to reach it.
        var counts: [[Int]: Int] = [:]
        var chosen: [Int] = []
        var chosenCount = 0
        for sample in stack.samples where best.map(sample.frames.contains) ?? true {
            let count = (counts[sample.frames] ?? 0) + 1
            counts[sample.frames] = count
            if count > chosenCount {
                chosenCount = count
                chosen = sample.frames
            }
        }
        self.stack = chosen.compactMap { stack.frames.indices.contains($0) ? described($0) : nil }
        self.samples = stack.samples.count
        if let best, let frame = described(best) {
            dominant = frame
            signature = Self.signature(imageId: frame.imageId, lookupOffset: frame.lookupOffset)
        } else {
            dominant = nil
            signature = stack.samples.isEmpty ? Self.noStack : Self.noAppFrame
        }
    }

    /// `<image id>+0x<offset in lowercase hex>`.
    public static func signature(imageId: String, lookupOffset: UInt64) -> String {
        "\(imageId)+0x\(String(lookupOffset, radix: 16))"
    }
}
