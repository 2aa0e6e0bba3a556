import FramescopeCore

extension HangStack {
    /// Puts the stack into the one form the collector keys by: image ids in lowercase hex
    /// without separators (a UUID may arrive as `73D406B3-246A-…`), image names in NFC.
    mutating func normalize() {
        for index in images.indices {
            images[index].id = Self.normalizedImageID(images[index].id)
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
            guard HangStack.isImageID(image.id) else {
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

extension IngestValidator {
    /// Puts a fatal hang's texts into NFC (screen, versions, build, tags, image names), as
    /// a visit's and a batch's are.
    static func normalize(_ event: inout FatalHangEvent) {
        event.screen = CanonicalText.nfc(event.screen)
        event.appVersion = CanonicalText.nfc(event.appVersion)
        event.build = CanonicalText.nfc(event.build)
        event.osVersion = CanonicalText.nfc(event.osVersion)
        // Two keys that become one cannot arrive as JSON (a `[String: String]` holds one);
        // a visit refuses them for any other caller, a fatal hang keeps one of the values.
        event.context.tags = normalizedTags(event.context.tags).tags
        event.stack?.normalize()
    }

    /// The first problem with a fatal hang, as (field, message), or `nil`: an id like a
    /// batch's, a screen, versions and tags as a visit's and a batch's, a start within the
    /// accepted range, a duration of 0 to a day, and a stack as a hang's.
    /// - Parameter startedAt: `event.startedAt` parsed (Unix seconds), nil when it is not a date.
    func check(_ event: FatalHangEvent, startedAt: Double?) -> (String, String)? {
        let id = event.id
        guard Self.isToken(id) else {
            return ("id", "id must be 1–64 letters, digits, '-' or '_'")
        }
        if let problem = WireText.problem(in: event.screen, maximumBytes: limits.maximumScreenLength) {
            return ("screen", "screen \(problem)")
        }
        for (field, value) in [("appVersion", event.appVersion), ("build", event.build), ("osVersion", event.osVersion), ("screen", event.screen)] {
            if field != "screen", let problem = WireText.problem(in: value, maximumBytes: limits.maximumFieldLength) {
                return (field, "\(field) \(problem)")
            }
            if value == CardinalityLimits.other { return (field, "\(field) '\(CardinalityLimits.other)' is reserved for folded values") }
        }
        guard let startedAt else {
            return ("startedAt", "startedAt must be an ISO 8601 date-time such as 2026-11-22T15:42:13Z")
        }
        if startedAt < now - limits.maximumAge { return ("startedAt", "startedAt is more than 30 days in the past") }
        if startedAt > now + limits.maximumFutureSkew { return ("startedAt", "startedAt is more than a day in the future") }
        guard event.duration.isFinite, event.duration >= 0, event.duration <= limits.maximumVisitDuration,
              startedAt + event.duration <= latestHangEnd else {
            return ("duration", "duration must be 0–\(Int(limits.maximumVisitDuration)) seconds, the hang ending by the batch's arrival plus the day of clock skew allowed for startedAt")
        }
        if let problem = Self.tagProblem(event.context.tags) { return problem }
        return nil
    }

    /// Removes a fatal hang's stack when it breaks a limit (``check(_:hangDuration:)``); the
    /// fatal hang is kept. Returns the removal as (field, message).
    static func dropInvalidStack(_ event: inout FatalHangEvent) -> [(String, String)] {
        guard let stack = event.stack else { return [] }
        let problem = event.duration.isFinite && event.duration >= 0
            ? check(stack, hangDuration: event.duration)
            : ("", "a stack needs a hang of a known duration")
        guard let (field, message) = problem else { return [] }
        event.stack = nil
        return [("stack\(field)", message)]
    }
}
