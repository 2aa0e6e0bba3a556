import FramescopeCore

extension HangStack {
    /// Puts the stack into the one form the collector keys by: image ids in lowercase hex
    /// without separators (a UUID may arrive as `73D406B3-246A-…`), image names in NFC.
    mutating func normalize() {
        for index in images.indices {
            images[index].id = String(images[index].id.unicodeScalars.filter { $0 != "-" }).lowercased()
            images[index].name = CanonicalText.nfc(images[index].name)
        }
    }
}

extension IngestValidator {
    /// The first problem with a hang's stack, as (the field's path below `stack`, message),
    /// or `nil`: at most ``HangStack/maximumImages`` images, each with a build identity of
    /// 16 to 64 lowercase hex digits (even), a file name (``WireText``, no `/`) and an
    /// extent of 1 byte to ``HangStack/maximumImageSize``; at most ``HangStack/maximumFrames``
    /// frames, each in a listed image and below its extent; at most
    /// ``HangStack/maximumSamples`` samples, in time order within the hang (plus 1 s),
    /// each of 1 to ``HangStack/maximumDepth`` listed frames.
    /// - Parameter hangDuration: The hang's length, in seconds.
    static func check(_ stack: HangStack, hangDuration: Double) -> (String, String)? {
        if stack.images.count > HangStack.maximumImages {
            return (".images", "a stack names at most \(HangStack.maximumImages) images")
        }
        for (position, image) in stack.images.enumerated() {
            let id = image.id.utf8
            guard (16...64).contains(id.count), id.count % 2 == 0,
                  id.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }) else {
                return (".images[\(position)].id", "an image id is a UUID or build id: 16–64 hex digits")
            }
            if let problem = WireText.problem(in: image.name, maximumBytes: HangStack.maximumImageNameLength) {
                return (".images[\(position)].name", "an image name \(problem)")
            }
            if image.name.utf8.contains(UInt8(ascii: "/")) {
                return (".images[\(position)].name", "an image name is a file name without its folder")
            }
            guard (1...HangStack.maximumImageSize).contains(image.size) else {
                return (".images[\(position)].size", "an image's size must be 1 byte to 4 GiB")
            }
        }
        if stack.frames.count > HangStack.maximumFrames {
            return (".frames", "a stack holds at most \(HangStack.maximumFrames) frames")
        }
        for (position, frame) in stack.frames.enumerated() {
            guard stack.images.indices.contains(frame.image) else {
                return (".frames[\(position)]", "a frame's image must be an index into images")
            }
            guard frame.offset < stack.images[frame.image].size else {
                return (".frames[\(position)]", "a frame's offset must lie within its image's size")
            }
        }
        if stack.samples.isEmpty || stack.samples.count > HangStack.maximumSamples {
            return (".samples", "a stack holds 1 to \(HangStack.maximumSamples) samples")
        }
        var previous = 0.0
        for (position, sample) in stack.samples.enumerated() {
            guard sample.at.isFinite, sample.at >= previous, sample.at <= hangDuration + 1 else {
                return (".samples[\(position)].at", "samples must be in time order, 0 to the hang's duration (plus 1 s)")
            }
            previous = sample.at
            guard (1...HangStack.maximumDepth).contains(sample.frames.count) else {
                return (".samples[\(position)].frames", "a sample holds 1 to \(HangStack.maximumDepth) frames")
            }
            if let bad = sample.frames.firstIndex(where: { !stack.frames.indices.contains($0) }) {
                return (".samples[\(position)].frames[\(bad)]", "a sample's frame must be an index into frames")
            }
        }
        return nil
    }
}
