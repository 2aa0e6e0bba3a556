import FramescopeJSON
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

extension MetricKitParser {
    /// Most frames read of one call-stack tree; the rest are skipped.
    public static let maximumCallStackFrames = 10_000
    /// Deepest frame read of a call-stack tree; deeper callers are skipped.
    public static let maximumCallStackDepth = 256

    /// `callStackTree`: the roots of its thread-attributed stack (the thread that hung), or
    /// nil when it has none. At most ``maximumCallStackFrames`` frames, ``maximumCallStackDepth``
    /// deep; frames without a UUID, name or offset are left out with their callers (an issue
    /// naming the first).
    func readCallStackTree<Source: ByteSource>(
        _ lexer: inout JSONStreamLexer<TraceError>, _ source: inout Source, path: String, into payload: inout MetricKitPayload
    ) throws(TraceError) -> [MetricKitCallStackFrame]? {
        var attributed: [MetricKitCallStackFrame]?
        var budget = Self.maximumCallStackFrames
        try forEachMember(&lexer, &source) { (key, lexer, source) throws(TraceError) in
            guard key == "callStacks" else { return try lexer.skipValue(&source) }
            try lexer.skipWhitespace(&source)
            guard try lexer.peekByte(&source) == UInt8(ascii: "[") else { return try lexer.skipValue(&source) }
            try lexer.expect(UInt8(ascii: "["), &source, "'['")
            if try lexer.consumeIf(UInt8(ascii: "]"), &source) { return }
            var index = 0
            repeat {
                let stackPath = "\(path).callStacks[\(index)]"
                index += 1
                var isAttributed = false
                var roots: [MetricKitCallStackFrame] = []
                try forEachMember(&lexer, &source) { (key, lexer, source) throws(TraceError) in
                    switch key {
                    case "threadAttributed":
                        try lexer.skipWhitespace(&source)
                        if try lexer.peekByte(&source) == UInt8(ascii: "t") { try lexer.skipValue(&source); isAttributed = true }
                        else { try lexer.skipValue(&source) }
                    case "callStackRootFrames" where attributed == nil:
                        roots = try readFrames(&lexer, &source, path: stackPath + ".callStackRootFrames", depth: 0,
                                               budget: &budget, into: &payload)
                    default:
                        try lexer.skipValue(&source)
                    }
                }
                if isAttributed && attributed == nil { attributed = roots }
            } while try lexer.separator(closing: UInt8(ascii: "]"), &source)
        }
        return attributed.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// A list of frames (roots or `subFrames`), each with its callers.
    private func readFrames<Source: ByteSource>(
        _ lexer: inout JSONStreamLexer<TraceError>, _ source: inout Source, path: String, depth: Int, budget: inout Int,
        into payload: inout MetricKitPayload
    ) throws(TraceError) -> [MetricKitCallStackFrame] {
        try lexer.skipWhitespace(&source)
        guard depth < Self.maximumCallStackDepth, try lexer.peekByte(&source) == UInt8(ascii: "[") else {
            try lexer.skipValue(&source)
            return []
        }
        try lexer.expect(UInt8(ascii: "["), &source, "'['")
        if try lexer.consumeIf(UInt8(ascii: "]"), &source) { return [] }
        var frames: [MetricKitCallStackFrame] = []
        var index = 0
        repeat {
            let framePath = "\(path)[\(index)]"
            index += 1
            guard budget > 0 else {
                try lexer.skipValue(&source)
                continue
            }
            budget -= 1
            let line = lexer.line
            var uuid: String?
            var name: String?
            var offset: Double?
            var samples: Double?
            var callers: [MetricKitCallStackFrame] = []
            try forEachMember(&lexer, &source) { (key, lexer, source) throws(TraceError) in
                switch key {
                case "binaryUUID": uuid = try optionalString(&lexer, &source, &payload, framePath + "." + key)
                case "binaryName": name = try optionalString(&lexer, &source, &payload, framePath + "." + key)
                case "offsetIntoBinaryTextSegment", "sampleCount":
                    try lexer.skipWhitespace(&source)
                    guard try lexer.peekByte(&source) != UInt8(ascii: "\"") else { return try lexer.skipValue(&source) }
                    if try lexer.null(&source) { return }
                    let value = try lexer.number(&source, parse: parseDouble)
                    if key == "sampleCount" { samples = value } else { offset = value }
                case "subFrames":
                    callers = try readFrames(&lexer, &source, path: framePath + ".subFrames", depth: depth + 1, budget: &budget,
                                             into: &payload)
                default:
                    try lexer.skipValue(&source)
                }
            }
            guard let uuid, let name, let offset, offset >= 0, offset < 4_294_967_296, offset == offset.rounded() else {
                issue(&payload, framePath, line, "a frame needs binaryUUID, binaryName and a whole offsetIntoBinaryTextSegment; left out with its callers")
                continue
            }
            let count = samples.flatMap { $0 >= 0 && $0 <= 1e9 && $0 == $0.rounded() ? Int($0) : nil } ?? 1
            frames.append(MetricKitCallStackFrame(binaryUUID: uuid, binaryName: name, offset: UInt64(offset), sampleCount: count,
                                                  subFrames: callers))
        } while try lexer.separator(closing: UInt8(ascii: "]"), &source)
        return frames
    }
}
