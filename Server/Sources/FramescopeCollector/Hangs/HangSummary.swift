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
/// The **dominant app frame** is the deepest frame of the app's own images that more
/// than half the samples hold: the slow code itself, below the callers every sample also
/// holds (`main`, the view controller's entry), and never a frame one sample happened to
/// catch. When no app frame is in more than half the samples (they disagree), it is the
/// deepest of those in the most samples. Depth is counted from the stack's root, so it
/// does not change with how deep each sample's leaf was; ties go to the frame in more
/// samples, then to the lower offset, then to the earlier image.
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
    /// - Complexity: O(samples × depth).
    public init(_ stack: HangStack) {
        let frameCount = stack.frames.count
        var sampleCount = [Int](repeating: 0, count: frameCount)
        var depth = [Int](repeating: -1, count: frameCount)
        var onlyFirst = [Bool](repeating: true, count: frameCount)
        var lastCounted = [Int](repeating: -1, count: frameCount)
        for (sampleIndex, sample) in stack.samples.enumerated() {
            for (position, frame) in sample.frames.enumerated() where stack.frames.indices.contains(frame) {
                if lastCounted[frame] != sampleIndex {
                    lastCounted[frame] = sampleIndex
                    sampleCount[frame] += 1
                }
                depth[frame] = max(depth[frame], sample.frames.count - 1 - position)
                if position > 0 { onlyFirst[frame] = false }
            }
        }
        func isApp(_ frame: Int) -> Bool {
            let image = stack.frames[frame].image
            return stack.images.indices.contains(image) && stack.images[image].app
        }
        let appFrames = (0..<frameCount).filter { sampleCount[$0] > 0 && isApp($0) }
        let most = appFrames.map { sampleCount[$0] }.max() ?? 0
        let majority = appFrames.filter { 2 * sampleCount[$0] > stack.samples.count }
        let candidates = majority.isEmpty ? appFrames.filter { sampleCount[$0] == most } : majority
        let best = candidates.min { a, b in
            (-depth[a], -sampleCount[a], stack.frames[a].offset, stack.frames[a].image)
                < (-depth[b], -sampleCount[b], stack.frames[b].offset, stack.frames[b].image)
        }
        let total = max(1, stack.samples.count)
        func described(_ frame: Int) -> HangFrame? {
            let location = stack.frames[frame]
            guard stack.images.indices.contains(location.image) else { return nil }
            let image = stack.images[location.image]
            return HangFrame(image: image.name, imageId: image.id, offset: location.offset,
                             lookupOffset: location.lookupOffset(isFirst: onlyFirst[frame]), app: image.app,
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
