import FramescopeCore

/// One frame of a MetricKit call-stack tree (`callStackTree.callStacks[].callStackRootFrames`,
/// `MXCallStackTree`): a root is the innermost frame of its stacks, its `subFrames` are its
/// callers, and `sampleCount` counts the samples that went through it.
public struct MetricKitCallStackFrame: Sendable, Hashable {
    /// `binaryUUID`, as Apple writes it (upper case, with dashes).
    public var binaryUUID: String
    /// `binaryName`, the image's file name.
    public var binaryName: String
    /// `offsetIntoBinaryTextSegment`: bytes from the image's header, like a Framescope frame's offset.
    public var offset: UInt64
    /// `sampleCount`: samples through this frame.
    public var sampleCount: Int
    /// `subFrames`: its callers.
    public var subFrames: [MetricKitCallStackFrame]

    /// A frame.
    public init(binaryUUID: String, binaryName: String, offset: UInt64, sampleCount: Int, subFrames: [MetricKitCallStackFrame] = []) {
        self.binaryUUID = binaryUUID
        self.binaryName = binaryName
        self.offset = offset
        self.sampleCount = sampleCount
        self.subFrames = subFrames
    }

    /// The tree's stacks as weighted paths, innermost first: each path from a root to a frame
    /// whose own samples (its `sampleCount` less its callers') are more than none, with that
    /// weight. At most `maximumPaths`, the heaviest.
    public static func paths(_ roots: [MetricKitCallStackFrame], maximumPaths: Int = 64) -> [(frames: [MetricKitCallStackFrame], weight: Int)] {
        var paths: [(frames: [MetricKitCallStackFrame], weight: Int)] = []
        var work: [(frame: MetricKitCallStackFrame, path: [MetricKitCallStackFrame])] = roots.reversed().map { ($0, []) }
        while let (frame, above) = work.popLast() {
            var path = above
            path.append(MetricKitCallStackFrame(binaryUUID: frame.binaryUUID, binaryName: frame.binaryName, offset: frame.offset,
                                                sampleCount: frame.sampleCount))
            let callers = frame.subFrames.reduce(0) { $0.addingReportingOverflow($1.sampleCount).partialValue }
            let own = frame.subFrames.isEmpty ? max(frame.sampleCount, 1) : frame.sampleCount - callers
            if own > 0 { paths.append((path, own)) }
            for caller in frame.subFrames.reversed() { work.append((caller, path)) }
        }
        return Array(paths.enumerated().sorted { ($1.element.weight, $0.offset) < ($0.element.weight, $1.offset) }
            .prefix(maximumPaths).map(\.element))
    }

    /// The tree as the wire's ``HangStack``: images by UUID (lower case, no dashes; sized to
    /// just past their furthest frame, since MetricKit gives no size), frames deduplicated,
    /// and at most ``HangStack/maximumSamples`` samples, each path repeated in proportion to its
    /// weight (at least once). `isApp` says which images are the app's (by name and id).
    /// Nil when no path has a frame of a well-formed image.
    public static func hangStack(_ roots: [MetricKitCallStackFrame], isApp: (_ name: String, _ id: String) -> Bool) -> HangStack? {
        let paths = Self.paths(roots, maximumPaths: HangStack.maximumSamples)
        let total = paths.reduce(0) { $0.addingReportingOverflow($1.weight).partialValue }
        guard total > 0 else { return nil }
        var images: [HangStack.Image] = []
        var imageIndex: [String: Int] = [:]
        var frames: [HangStack.Frame] = []
        var frameIndex: [HangStack.Frame: Int] = [:]
        var samples: [HangStack.Sample] = []
        for (path, weight) in paths {
            var indices: [Int] = []
            for frame in path.prefix(HangStack.maximumDepth) {
                let id = String(frame.binaryUUID.lowercased().filter { $0 != "-" })
                guard id.utf8.count == 32, id.allSatisfy(\.isHexDigit), frame.offset < HangStack.maximumImageSize - 1 else { continue }
                let image: Int
                if let known = imageIndex[id] {
                    image = known
                } else {
                    guard images.count < HangStack.maximumImages else { continue }
                    var name = WireText.sanitized(frame.binaryName.split(separator: "/").last.map(String.init) ?? "",
                                                  maximumBytes: HangStack.maximumImageNameLength, fallback: "(unnamed)")
                    if name.contains("/") { name = "(unnamed)" }
                    image = images.count
                    imageIndex[id] = image
                    images.append(HangStack.Image(id: id, name: name, size: 1, app: isApp(name, id)))
                }
                images[image].size = max(images[image].size, frame.offset + 1)
                let location = HangStack.Frame(image: image, offset: frame.offset)
                if let known = frameIndex[location] {
                    indices.append(known)
                } else if frames.count < HangStack.maximumFrames {
                    frameIndex[location] = frames.count
                    indices.append(frames.count)
                    frames.append(location)
                }
            }
            guard !indices.isEmpty else { continue }
            let copies = max(1, Int((Double(weight) / Double(total) * Double(HangStack.maximumSamples)).rounded(.down)))
            for _ in 0..<copies where samples.count < HangStack.maximumSamples {
                samples.append(HangStack.Sample(at: 0, frames: indices))
            }
        }
        return samples.isEmpty ? nil : HangStack(images: images, frames: frames, samples: samples)
    }
}
