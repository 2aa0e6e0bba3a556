import Foundation
import FramescopeCore
import FramescopeJSON

/// Decodes a `POST /v1/events` body into a ``WireBatch`` in one forward pass over its
/// bytes, without Foundation's `JSONDecoder`.
///
/// It is a fast path that either gives exactly what `JSONDecoder` gives or declines
/// (`nil`), and the caller then decodes the body with `JSONDecoder` as before. So every
/// error, its field path and its message are `JSONDecoder`'s; this path produces only
/// events that decoded, and events whose binary report is refused (not base64, a tally
/// over ``FrameReport/maximumTallyEntriesPerVisit``, physics), which it rejects with the
/// path and message `JSONDecoder` gives, so that such a report costs one pass over the
/// body, not four.
///
/// To keep that promise it checks the whole body's JSON syntax (strings with their
/// escapes and UTF-8, numbers, literals, nesting), decodes the envelope and each event
/// with the same rules as their `Decodable` conformances (``ScreenVisitEvent``'s choice
/// between `report` and `reportData` included), and declines whenever it is not sure:
/// a duplicated, escaped or unknown key (so that a repeated member is always found by
/// ``decodeBatch(_:)``'s check, and unknown members cost nothing here), a number it would
/// have to convert (`60.0` for an `Int`), a number out of `Double`'s range, a byte order
/// mark, nesting deeper than 512. An event it cannot decode itself (reports sent as JSON
/// objects) is decoded alone by `JSONDecoder` from its bytes when none of its members
/// repeats; if that fails too, the whole body is declined.
enum WireBatchDecoder {
    /// The batch, or `nil` when the body must go through `JSONDecoder`.
    static func decode(_ bytes: UnsafeRawBufferPointer) -> WireBatch? {
        var parser = WireJSONParser(bytes: bytes)
        return try? parser.batch()
    }
}

/// The batch's shapes over the shared strict scanner (``JSONScanner``): each method reads
/// one part of the batch and throws on anything it does not accept, the scanner's syntax
/// refusals and this parser's own ("not accepted here", `Decline()`) alike; either way the
/// caller falls back to `JSONDecoder`.
struct WireJSONParser {
    typealias Decline = JSONScanError

    private var scanner: JSONScanner
    /// How many events this parser declined and `JSONDecoder` read alone (an unknown member,
    /// a report `JSONDecoder` refuses): 0 for every batch an SDK sends, stacks included.
    private(set) var eventsLeftToJSONDecoder = 0

    init(bytes: UnsafeRawBufferPointer) {
        scanner = JSONScanner(bytes: bytes)
    }

    // MARK: The batch

    /// The whole body: the envelope, then each event; only whitespace may follow.
    mutating func batch() throws(Decline) -> WireBatch {
        var batchId: String?
        var app: AppInfo?
        var device: DeviceInfo?
        var events: [WireBatch.LossyEvent]?
        var sampleRate: Double?
        var seen = Seen()
        try scanner.beginObject()
        if !scanner.isEmptyObject() {
            repeat {
                let key = try scanner.key()
                if scanner.matches(key, "batchId") {
                    try seen.insert(0)
                    batchId = try scanner.string()
                } else if scanner.matches(key, "app") {
                    try seen.insert(1)
                    app = try appInfo()
                } else if scanner.matches(key, "device") {
                    try seen.insert(2)
                    device = try deviceInfo()
                } else if scanner.matches(key, "events") {
                    try seen.insert(3)
                    events = try eventList()
                } else if scanner.matches(key, "sampleRate") {
                    // A number, or `null` (absent); its range is validation's.
                    try seen.insert(4)
                    sampleRate = try scanner.null() ? nil : try scanner.double()
                } else {
                    throw Decline()
                }
            } while try scanner.nextMember()
        }
        scanner.skipWhitespace()
        guard scanner.index == scanner.bytes.count, let batchId, let app, let device, let events else { throw Decline() }
        return WireBatch(batchId: batchId, app: app, device: device, events: events, sampleRate: sampleRate)
    }

    /// `{"id"?, "version", "build"}`: `id` absent or `null` leaves the app to the ingest key.
    private mutating func appInfo() throws(Decline) -> AppInfo {
        var id: String?, version: String?, build: String?
        var seen = Seen()
        try scanner.beginObject()
        if !scanner.isEmptyObject() {
            repeat {
                let key = try scanner.key()
                if scanner.matches(key, "id") { try seen.insert(0); id = try scanner.null() ? nil : try scanner.string() }
                else if scanner.matches(key, "version") { try seen.insert(1); version = try scanner.string() }
                else if scanner.matches(key, "build") { try seen.insert(2); build = try scanner.string() }
                else { throw Decline() }
            } while try scanner.nextMember()
        }
        guard let version, let build else { throw Decline() }
        return AppInfo(id: id, version: version, build: build)
    }

    /// `{"model", "osName", "osVersion", "maxRefreshRate", "installationId"?}`.
    private mutating func deviceInfo() throws(Decline) -> DeviceInfo {
        var model: String?, osName: String?, osVersion: String?, rate: Int?, installation: String?
        var seen = Seen()
        try scanner.beginObject()
        if !scanner.isEmptyObject() {
            repeat {
                let key = try scanner.key()
                if scanner.matches(key, "model") { try seen.insert(0); model = try scanner.string() }
                else if scanner.matches(key, "osName") { try seen.insert(1); osName = try scanner.string() }
                else if scanner.matches(key, "osVersion") { try seen.insert(2); osVersion = try scanner.string() }
                else if scanner.matches(key, "maxRefreshRate") { try seen.insert(3); rate = try scanner.integer() }
                else if scanner.matches(key, "installationId") { try seen.insert(4); installation = try scanner.null() ? nil : try scanner.string() }
                else { throw Decline() }
            } while try scanner.nextMember()
        }
        guard let model, let osName, let osVersion, let rate else { throw Decline() }
        return DeviceInfo(model: model, osName: osName, osVersion: osVersion, maxRefreshRate: rate, installationId: installation)
    }

    /// The `events` array: each element decoded here, or alone by `JSONDecoder` when this
    /// path declines it.
    private mutating func eventList() throws(Decline) -> [WireBatch.LossyEvent] {
        scanner.skipWhitespace()
        try scanner.expect(UInt8(ascii: "["), "'['")
        var events: [WireBatch.LossyEvent] = []
        scanner.skipWhitespace()
        if scanner.peek() == UInt8(ascii: "]") {
            scanner.index += 1
            return events
        }
        while true {
            scanner.skipWhitespace()
            let saved = scanner
            let start = scanner.index
            let event: WireBatch.LossyEvent
            do {
                event = try self.event(index: events.count)
            } catch {
                scanner = saved
                try scanner.skipValue()
                eventsLeftToJSONDecoder += 1
                event = try Self.foundationDecode(UnsafeRawBufferPointer(rebasing: scanner.bytes[start..<scanner.index]))
            }
            events.append(event)
            scanner.skipWhitespace()
            switch scanner.peek() {
            case UInt8(ascii: ","): scanner.index += 1
            case UInt8(ascii: "]"): scanner.index += 1; return events
            default: throw Decline()
            }
        }
    }

    /// One event decoded by `JSONDecoder` from its own bytes (one this path declined: an
    /// unknown member, a report `JSONDecoder` refuses): the same conformance, so the same value as within the batch.
    private static func foundationDecode(_ slice: UnsafeRawBufferPointer) throws(Decline) -> WireBatch.LossyEvent {
        guard JSONScanner.repeatedMembers(in: slice)?.isEmpty == true,
              let event = try? JSONDecoder().decode(WireBatch.LossyEvent.self, from: Data(slice)),
              case .success = event.result else { throw Decline() }
        return event
    }

    /// One event: a visit (``ScreenVisitEvent``'s rules: `report` wins over `reportData`,
    /// `motion` over `motionData`) or a fatal hang (``FatalHangEvent``), by its `kind`,
    /// with every hang stack read here.
    ///
    /// A report sent as a JSON object is the one part `JSONDecoder` reads, from that
    /// object's bytes alone (``jsonReport()``): the same conformance, so the same value,
    /// while the hang stacks beside it, up to 32 of 50 × 256 frames a visit, are read here.
    /// Before, such a visit, and every fatal hang, went to `JSONDecoder` whole: a 16 MiB
    /// body of 19 visits with 32 maximal stacks each took 6–8 s of CPU (issue 43, item 1).
    ///
    /// A binary report that is refused (not base64, a tally over its cap, physics) is
    /// settled here as the event's rejection, with the path and message `JSONDecoder`
    /// gives (``ScreenVisitEvent/deviceReport(base64:field:)``): every member the event's
    /// decoding reads before the report has been read by then, as it reads them, so its
    /// first error is this one. Declining instead cost the whole body three more passes
    /// (the event alone, then the body by `JSONDecoder` and the repeated-member scan):
    /// 5.2 s for two reports claiming a million window-FPS entries each in a debug build
    /// (issue 43, item 8).
    private mutating func event(index: Int) throws(Decline) -> WireBatch.LossyEvent {
        var kind: String?, screen: String?, startedAt: String?, duration: Double?, context: VisitContext?
        var reportData: String?, hangs: [HangRecord]?, resources: ResourceUsage?
        var mainThreadHitches: MainThreadHitches?
        var report: FrameReport?
        var hasMotion = false
        var motion: FrameReport?
        var motionData: String?
        var id: String?, appVersion: String?, build: String?, osVersion: String?, stack: HangStack?
        var seen = Seen()
        // Members only a visit has (positions 5–11), and only a fatal hang (12–16).
        let visitMembers: UInt32 = 0b1111111 << 5, fatalMembers: UInt32 = 0b11111 << 12
        try scanner.beginObject()
        guard !scanner.isEmptyObject() else { throw Decline() }
        repeat {
            let key = try scanner.key()
            if scanner.matches(key, "kind") { try seen.insert(0); kind = try scanner.string() }
            else if scanner.matches(key, "screen") { try seen.insert(1); screen = try scanner.string() }
            else if scanner.matches(key, "startedAt") { try seen.insert(2); startedAt = try scanner.string() }
            else if scanner.matches(key, "duration") { try seen.insert(3); duration = try scanner.double() }
            else if scanner.matches(key, "context") { try seen.insert(4); context = try visitContext() }
            else if scanner.matches(key, "reportData") { try seen.insert(5); reportData = try scanner.string() }
            else if scanner.matches(key, "motionData") {
                try seen.insert(6)
                motionData = try scanner.null() ? nil : try scanner.string()
            } else if scanner.matches(key, "hangs") { try seen.insert(7); hangs = try hangList() }
            else if scanner.matches(key, "resources") { try seen.insert(8); resources = try scanner.null() ? nil : try resourceUsage() }
            else if scanner.matches(key, "motion") {
                // `null` means no motion; an object is read as `report` is.
                try seen.insert(9)
                hasMotion = true
                motion = try scanner.null() ? nil : try jsonReport()
            } else if scanner.matches(key, "mainThreadHitches") {
                try seen.insert(10)
                mainThreadHitches = try scanner.null() ? nil : try mainThreadHitchFigures()
            } else if scanner.matches(key, "report") { try seen.insert(11); report = try jsonReport() }
            else if scanner.matches(key, "id") { try seen.insert(12); id = try scanner.string() }
            else if scanner.matches(key, "appVersion") { try seen.insert(13); appVersion = try scanner.string() }
            else if scanner.matches(key, "build") { try seen.insert(14); build = try scanner.string() }
            else if scanner.matches(key, "osVersion") { try seen.insert(15); osVersion = try scanner.string() }
            else if scanner.matches(key, "stack") { try seen.insert(16); stack = try scanner.null() ? nil : try hangStack() }
            else {
                // Any member this version does not know.
                throw Decline()
            }
        } while try scanner.nextMember()
        guard let kind, let screen, let startedAt, let duration, let context else { throw Decline() }
        if kind == "fatalHang" {
            // JSONDecoder ignores a visit's members in a fatal hang; this path declines them.
            guard seen.bits & visitMembers == 0, let id, let appVersion, let build, let osVersion else { throw Decline() }
            return WireBatch.LossyEvent(fatalHang: FatalHangEvent(id: id, screen: screen, startedAt: startedAt, duration: duration,
                                                                  appVersion: appVersion, build: build, osVersion: osVersion,
                                                                  context: context, stack: stack))
        }
        guard seen.bits & fatalMembers == 0, let hangs else { throw Decline() }
        if report == nil {
            guard let reportData else { throw Decline() }
            switch ScreenVisitEvent.deviceReport(base64: reportData, field: "reportData") {
            case let .success(decoded): report = decoded
            case let .failure(error): return WireBatch.LossyEvent(refusing: index, "reportData", message: error.message)
            }
        }
        if !hasMotion, let motionData {
            switch ScreenVisitEvent.deviceReport(base64: motionData, field: "motionData") {
            case let .success(decoded): motion = decoded
            case let .failure(error): return WireBatch.LossyEvent(refusing: index, "motionData", message: error.message)
            }
        }
        guard let report else { throw Decline() }
        var event = ScreenVisitEvent(screen: screen, startedAt: startedAt, duration: duration, context: context, report: report,
                                     motion: motion, hangs: hangs, resources: resources, mainThreadHitches: mainThreadHitches)
        event.kind = kind
        return WireBatch.LossyEvent(event)
    }

    /// A report sent as a JSON object (`report`, `motion`), decoded by `JSONDecoder` from
    /// the object's own bytes: a few KiB, where the event around it may hold megabytes of
    /// stacks. An object with a repeated member, or one `JSONDecoder` refuses, is declined,
    /// so the event's error is `JSONDecoder`'s own.
    private mutating func jsonReport() throws(Decline) -> FrameReport {
        scanner.skipWhitespace()
        guard scanner.peek() == UInt8(ascii: "{") else { throw Decline() }
        let start = scanner.index
        try scanner.skipValue()
        let slice = UnsafeRawBufferPointer(rebasing: scanner.bytes[start..<scanner.index])
        guard JSONScanner.repeatedMembers(in: slice)?.isEmpty == true,
              let report = try? JSONDecoder().decode(FrameReport.self, from: Data(slice)) else { throw Decline() }
        return report
    }

    /// `{"network", "lowPowerMode", "thermalState", "tags"}`.
    private mutating func visitContext() throws(Decline) -> VisitContext {
        var network: VisitContext.Network?, lowPower: Bool?, thermal: VisitContext.ThermalState?, tags: [String: String]?
        var seen = Seen()
        try scanner.beginObject()
        if !scanner.isEmptyObject() {
            repeat {
                let key = try scanner.key()
                if scanner.matches(key, "network") { try seen.insert(0); network = VisitContext.Network(rawValue: try scanner.string()) }
                else if scanner.matches(key, "lowPowerMode") { try seen.insert(1); lowPower = try scanner.boolean() }
                else if scanner.matches(key, "thermalState") { try seen.insert(2); thermal = VisitContext.ThermalState(rawValue: try scanner.string()) }
                else if scanner.matches(key, "tags") { try seen.insert(3); tags = try stringDictionary() }
                else { throw Decline() }
            } while try scanner.nextMember()
        }
        guard let network, let lowPower, let thermal, let tags else { throw Decline() }
        return VisitContext(network: network, lowPowerMode: lowPower, thermalState: thermal, tags: tags)
    }

    /// An object of strings; a key given twice is declined.
    private mutating func stringDictionary() throws(Decline) -> [String: String] {
        var result: [String: String] = [:]
        try scanner.beginObject()
        if !scanner.isEmptyObject() {
            repeat {
                scanner.skipWhitespace()
                let key = try scanner.string()
                scanner.skipWhitespace()
                try scanner.expect(UInt8(ascii: ":"), "':'")
                guard result.updateValue(try scanner.string(), forKey: key) == nil else { throw Decline() }
            } while try scanner.nextMember()
        }
        return result
    }

    /// `[{"offset", "duration"}, ...]`.
    private mutating func hangList() throws(Decline) -> [HangRecord] {
        scanner.skipWhitespace()
        try scanner.expect(UInt8(ascii: "["), "'['")
        var hangs: [HangRecord] = []
        scanner.skipWhitespace()
        if scanner.peek() == UInt8(ascii: "]") {
            scanner.index += 1
            return hangs
        }
        while true {
            var offset: Double?, duration: Double?, idle: Bool?, stack: HangStack?
            var seen = Seen()
            try scanner.beginObject()
            if !scanner.isEmptyObject() {
                repeat {
                    let key = try scanner.key()
                    if scanner.matches(key, "offset") { try seen.insert(0); offset = try scanner.double() }
                    else if scanner.matches(key, "duration") { try seen.insert(1); duration = try scanner.double() }
                    else if scanner.matches(key, "idle") { try seen.insert(2); idle = try scanner.null() ? nil : try scanner.boolean() }
                    else if scanner.matches(key, "stack") { try seen.insert(3); stack = try scanner.null() ? nil : try hangStack() }
                    else { throw Decline() }
                } while try scanner.nextMember()
            }
            guard let offset, let duration else { throw Decline() }
            hangs.append(HangRecord(offset: offset, duration: duration, idle: idle, stack: stack))
            scanner.skipWhitespace()
            switch scanner.peek() {
            case UInt8(ascii: ","): scanner.index += 1
            case UInt8(ascii: "]"): scanner.index += 1; return hangs
            default: throw Decline()
            }
        }
    }

    /// `{"images", "frames", "samples"}` (``HangStack``); only the shapes are read here,
    /// the limits are validation's.
    private mutating func hangStack() throws(Decline) -> HangStack {
        var images: [HangStack.Image]?, frames: [HangStack.Frame]?, samples: [HangStack.Sample]?
        var seen = Seen()
        try scanner.beginObject()
        if !scanner.isEmptyObject() {
            repeat {
                let key = try scanner.key()
                if scanner.matches(key, "images") {
                    try seen.insert(0)
                    images = try array { (parser: inout WireJSONParser) throws(Decline) in try parser.hangImage() }
                } else if scanner.matches(key, "frames") {
                    try seen.insert(1)
                    frames = try array { (parser: inout WireJSONParser) throws(Decline) in
                        let pair = try parser.integers()
                        guard pair.count == 2, pair[1] >= 0 else { throw Decline() }
                        return HangStack.Frame(image: pair[0], offset: UInt64(pair[1]))
                    }
                } else if scanner.matches(key, "samples") {
                    try seen.insert(2)
                    samples = try array { (parser: inout WireJSONParser) throws(Decline) in try parser.hangSample() }
                } else {
                    throw Decline()
                }
            } while try scanner.nextMember()
        }
        guard let images, let frames, let samples else { throw Decline() }
        return HangStack(images: images, frames: frames, samples: samples)
    }

    /// `{"id", "name", "size", "app"}`.
    private mutating func hangImage() throws(Decline) -> HangStack.Image {
        var id: String?, name: String?, size: Int?, app: Bool?
        var seen = Seen()
        try scanner.beginObject()
        if !scanner.isEmptyObject() {
            repeat {
                let key = try scanner.key()
                if scanner.matches(key, "id") { try seen.insert(0); id = try scanner.string() }
                else if scanner.matches(key, "name") { try seen.insert(1); name = try scanner.string() }
                else if scanner.matches(key, "size") { try seen.insert(2); size = try scanner.integer() }
                else if scanner.matches(key, "app") { try seen.insert(3); app = try scanner.boolean() }
                else { throw Decline() }
            } while try scanner.nextMember()
        }
        guard let id, let name, let size, size >= 0, let app else { throw Decline() }
        return HangStack.Image(id: id, name: name, size: UInt64(size), app: app)
    }

    /// `{"at", "frames"}`.
    private mutating func hangSample() throws(Decline) -> HangStack.Sample {
        var at: Double?, frames: [Int]?
        var seen = Seen()
        try scanner.beginObject()
        if !scanner.isEmptyObject() {
            repeat {
                let key = try scanner.key()
                if scanner.matches(key, "at") { try seen.insert(0); at = try scanner.double() }
                else if scanner.matches(key, "frames") {
                    try seen.insert(1)
                    frames = try integers()
                } else { throw Decline() }
            } while try scanner.nextMember()
        }
        guard let at, let frames else { throw Decline() }
        return HangStack.Sample(at: at, frames: frames)
    }

    /// A JSON array of integers (a sample's frame indices, a frame's pair): read in a plain
    /// loop, not through ``array(_:)``'s closure, since a visit may hold 32 × 50 × 256 of them.
    private mutating func integers() throws(Decline) -> [Int] {
        var elements: [Int] = []
        try scanner.beginArray()
        if scanner.isEmptyArray() { return elements }
        repeat {
            elements.append(try scanner.integer())
        } while try scanner.nextElement()
        return elements
    }

    /// A JSON array, each element read by `element`.
    private mutating func array<Element>(_ element: (inout WireJSONParser) throws(Decline) -> Element) throws(Decline) -> [Element] {
        var elements: [Element] = []
        try scanner.beginArray()
        if scanner.isEmptyArray() { return elements }
        repeat {
            elements.append(try element(&self))
        } while try scanner.nextElement()
        return elements
    }

    /// `{"cpuPercent", "residentBytes", "samples"}`.
    private mutating func resourceUsage() throws(Decline) -> ResourceUsage {
        var cpu: ResourceUsage.Summary?, resident: ResourceUsage.Summary?, samples: Int?
        var seen = Seen()
        try scanner.beginObject()
        if !scanner.isEmptyObject() {
            repeat {
                let key = try scanner.key()
                if scanner.matches(key, "cpuPercent") { try seen.insert(0); cpu = try summary() }
                else if scanner.matches(key, "residentBytes") { try seen.insert(1); resident = try summary() }
                else if scanner.matches(key, "samples") { try seen.insert(2); samples = try scanner.integer() }
                else { throw Decline() }
            } while try scanner.nextMember()
        }
        guard let cpu, let resident, let samples else { throw Decline() }
        return ResourceUsage(cpuPercent: cpu, residentBytes: resident, samples: samples)
    }

    /// `{"frames", "hitchTime"}`; values ``MainThreadHitches`` would refuse are declined.
    private mutating func mainThreadHitchFigures() throws(Decline) -> MainThreadHitches {
        var frames: Int?, hitchTime: Double?
        var seen = Seen()
        try scanner.beginObject()
        if !scanner.isEmptyObject() {
            repeat {
                let key = try scanner.key()
                if scanner.matches(key, "frames") { try seen.insert(0); frames = try scanner.integer() }
                else if scanner.matches(key, "hitchTime") { try seen.insert(1); hitchTime = try scanner.double() }
                else { throw Decline() }
            } while try scanner.nextMember()
        }
        guard let frames, let hitchTime, frames >= 0, hitchTime >= 0 else { throw Decline() }
        return MainThreadHitches(frames: frames, hitchTime: hitchTime)
    }

    /// `{"min", "mean", "max"}`.
    private mutating func summary() throws(Decline) -> ResourceUsage.Summary {
        var low: Double?, mean: Double?, high: Double?
        var seen = Seen()
        try scanner.beginObject()
        if !scanner.isEmptyObject() {
            repeat {
                let key = try scanner.key()
                if scanner.matches(key, "min") { try seen.insert(0); low = try scanner.double() }
                else if scanner.matches(key, "mean") { try seen.insert(1); mean = try scanner.double() }
                else if scanner.matches(key, "max") { try seen.insert(2); high = try scanner.double() }
                else { throw Decline() }
            } while try scanner.nextMember()
        }
        guard let low, let mean, let high else { throw Decline() }
        return ResourceUsage.Summary(min: low, mean: mean, max: high)
    }

    // MARK: Objects

    /// The keys of one object already read, by position in its list of known keys.
    private struct Seen {
        private(set) var bits: UInt32 = 0

        /// Records key `position` (0–31); a second time means a duplicated key, declined.
        mutating func insert(_ position: Int) throws(Decline) {
            let bit: UInt32 = 1 << position
            guard bits & bit == 0 else { throw Decline() }
            bits |= bit
        }
    }
}

extension WireBatch.LossyEvent {
    /// A fatal hang that decoded.
    init(fatalHang: FatalHangEvent) {
        result = .success(.fatalHang(fatalHang))
    }

    /// The rejection `JSONDecoder` gives event `index` for its member `key`: a
    /// `dataCorrupted` error at `events[index].key` saying `message`.
    init(refusing index: Int, _ key: String, message: String) {
        let path: [any CodingKey] = [PathKey(stringValue: "events"), PathKey(intValue: index), PathKey(stringValue: key)]
        result = .failure(.dataCorrupted(DecodingError.Context(codingPath: path, debugDescription: message)))
    }
}
