import Foundation
import FramescopeCore

/// Decodes a `POST /v1/events` body into a ``WireBatch`` in one forward pass over its
/// bytes, without Foundation's `JSONDecoder`, and finds each event's bytes as it goes.
///
/// It is a fast path that either gives exactly what `JSONDecoder` gives or declines
/// (`nil`), and the caller then decodes the body with `JSONDecoder` as before. So every
/// error, its field path and its message still come from `JSONDecoder`; this path only
/// ever produces batches in which every event decoded.
///
/// To keep that promise it checks the whole body's JSON syntax (strings with their
/// escapes and UTF-8, numbers, literals, nesting), decodes the envelope and each event
/// with the same rules as their `Decodable` conformances (``ScreenVisitEvent``'s choice
/// between `report` and `reportData` included), and declines whenever it is not sure:
/// a duplicated or escaped key, a number it would have to convert (`60.0` for an `Int`),
/// a number out of `Double`'s range, a byte order mark, nesting deeper than 512.
/// An event it cannot decode itself (reports sent as JSON objects) is decoded alone by
/// `JSONDecoder` from its bytes; if that fails too, the whole body is declined.
enum WireBatchDecoder {
    /// The batch and each event's JSON exactly as sent, or `nil` when the body must go
    /// through `JSONDecoder`.
    static func decode(_ bytes: UnsafeRawBufferPointer) -> (batch: WireBatch, rawEvents: [String])? {
        var parser = WireJSONParser(bytes: bytes)
        return try? parser.batch()
    }
}

/// The fast path cannot decide this body (or event); the caller falls back to `JSONDecoder`.
struct WireJSONDecline: Error {}

/// A strict, forward-only JSON reader over a body's bytes, with the batch's shapes built in.
///
/// Every method leaves `index` just after the value it read and throws ``WireJSONDecline``
/// on anything it does not accept.
struct WireJSONParser {
    typealias Decline = WireJSONDecline

    private let bytes: UnsafeRawBufferPointer
    private var index = 0
    private var depth = 0
    /// Deeper nesting is declined (`JSONDecoder` refuses deeper than 512 itself).
    private static let maximumDepth = 512

    init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    // MARK: The batch

    /// The whole body: the envelope, then each event; only whitespace may follow.
    mutating func batch() throws(Decline) -> (batch: WireBatch, rawEvents: [String]) {
        var batchId: String?
        var app: AppInfo?
        var device: DeviceInfo?
        var events: [WireBatch.LossyEvent]?
        var rawEvents: [String] = []
        var seen = Seen()
        try beginObject()
        if try !isEmptyObject() {
            repeat {
                let key = try key()
                if matches(key, "batchId") {
                    try seen.insert(0)
                    batchId = try string()
                } else if matches(key, "app") {
                    try seen.insert(1)
                    app = try appInfo()
                } else if matches(key, "device") {
                    try seen.insert(2)
                    device = try deviceInfo()
                } else if matches(key, "events") {
                    try seen.insert(3)
                    (events, rawEvents) = try eventList()
                } else {
                    try skipValue()
                }
            } while try nextMember()
        }
        skipWhitespace()
        guard index == bytes.count, let batchId, let app, let device, let events else { throw Decline() }
        return (WireBatch(batchId: batchId, app: app, device: device, events: events), rawEvents)
    }

    /// `{"id", "version", "build"}`.
    private mutating func appInfo() throws(Decline) -> AppInfo {
        var id: String?, version: String?, build: String?
        var seen = Seen()
        try beginObject()
        if try !isEmptyObject() {
            repeat {
                let key = try key()
                if matches(key, "id") { try seen.insert(0); id = try string() }
                else if matches(key, "version") { try seen.insert(1); version = try string() }
                else if matches(key, "build") { try seen.insert(2); build = try string() }
                else { try skipValue() }
            } while try nextMember()
        }
        guard let id, let version, let build else { throw Decline() }
        return AppInfo(id: id, version: version, build: build)
    }

    /// `{"model", "osName", "osVersion", "maxRefreshRate", "installationId"?}`.
    private mutating func deviceInfo() throws(Decline) -> DeviceInfo {
        var model: String?, osName: String?, osVersion: String?, rate: Int?, installation: String?
        var seen = Seen()
        try beginObject()
        if try !isEmptyObject() {
            repeat {
                let key = try key()
                if matches(key, "model") { try seen.insert(0); model = try string() }
                else if matches(key, "osName") { try seen.insert(1); osName = try string() }
                else if matches(key, "osVersion") { try seen.insert(2); osVersion = try string() }
                else if matches(key, "maxRefreshRate") { try seen.insert(3); rate = try integer() }
                else if matches(key, "installationId") { try seen.insert(4); installation = try null() ? nil : try string() }
                else { try skipValue() }
            } while try nextMember()
        }
        guard let model, let osName, let osVersion, let rate else { throw Decline() }
        return DeviceInfo(model: model, osName: osName, osVersion: osVersion, maxRefreshRate: rate, installationId: installation)
    }

    /// The `events` array: each element decoded here, or alone by `JSONDecoder`.
    private mutating func eventList() throws(Decline) -> ([WireBatch.LossyEvent], [String]) {
        skipWhitespace()
        try expect(UInt8(ascii: "["))
        var events: [WireBatch.LossyEvent] = []
        var raw: [String] = []
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            index += 1
            return (events, raw)
        }
        while true {
            skipWhitespace()
            let start = index
            let startDepth = depth
            let event: ScreenVisitEvent
            do {
                event = try screenVisit()
            } catch {
                index = start
                depth = startDepth
                try skipValue()
                event = try Self.foundationDecode(UnsafeRawBufferPointer(rebasing: bytes[start..<index]))
            }
            events.append(WireBatch.LossyEvent(event))
            raw.append(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self))
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"): index += 1; return (events, raw)
            default: throw Decline()
            }
        }
    }

    /// One event decoded by `JSONDecoder` from its own bytes: the same conformance, so the
    /// same value as within the batch.
    private static func foundationDecode(_ slice: UnsafeRawBufferPointer) throws(Decline) -> ScreenVisitEvent {
        do {
            return try JSONDecoder().decode(ScreenVisitEvent.self, from: Data(slice))
        } catch {
            throw Decline()
        }
    }

    /// An event whose reports travel in their binary form (``ScreenVisitEvent``'s rules:
    /// `report` wins over `reportData`, `motion` over `motionData`).
    private mutating func screenVisit() throws(Decline) -> ScreenVisitEvent {
        var kind: String?, screen: String?, startedAt: String?, duration: Double?, context: VisitContext?
        var reportData: String?, hangs: [HangRecord]?, resources: ResourceUsage?
        var mainThreadHitches: MainThreadHitches?
        var hasMotion = false
        var motionData: String?
        var seen = Seen()
        try beginObject()
        guard try !isEmptyObject() else { throw Decline() }
        repeat {
            let key = try key()
            if matches(key, "kind") { try seen.insert(0); kind = try string() }
            else if matches(key, "screen") { try seen.insert(1); screen = try string() }
            else if matches(key, "startedAt") { try seen.insert(2); startedAt = try string() }
            else if matches(key, "duration") { try seen.insert(3); duration = try double() }
            else if matches(key, "context") { try seen.insert(4); context = try visitContext() }
            else if matches(key, "reportData") { try seen.insert(5); reportData = try string() }
            else if matches(key, "motionData") {
                try seen.insert(6)
                motionData = try null() ? nil : try string()
            } else if matches(key, "hangs") { try seen.insert(7); hangs = try hangList() }
            else if matches(key, "resources") { try seen.insert(8); resources = try null() ? nil : try resourceUsage() }
            else if matches(key, "mainThreadHitches") {
                try seen.insert(10)
                mainThreadHitches = try null() ? nil : try mainThreadHitchFigures()
            }
            else if matches(key, "motion") {
                // A JSON report object is left to JSONDecoder; `null` means no motion.
                try seen.insert(9)
                hasMotion = true
                guard try null() else { throw Decline() }
            } else if matches(key, "report") {
                throw Decline()
            } else {
                try skipValue()
            }
        } while try nextMember()
        guard let kind, let screen, let startedAt, let duration, let context, let reportData, let hangs else { throw Decline() }
        let report = try Self.binaryReport(reportData)
        var motion: FrameReport?
        if !hasMotion, let motionData { motion = try Self.binaryReport(motionData) }
        var event = ScreenVisitEvent(screen: screen, startedAt: startedAt, duration: duration, context: context, report: report,
                                     motion: motion, hangs: hangs, resources: resources, mainThreadHitches: mainThreadHitches)
        event.kind = kind
        return event
    }

    /// A report from its base64 binary form, as ``ScreenVisitEvent`` reads it.
    private static func binaryReport(_ text: String) throws(Decline) -> FrameReport {
        guard let bytes = Base64.decode(text),
              let report = try? FrameReport(binary: bytes, maximumTallyEntries: FrameReport.maximumTallyEntriesPerVisit) else { throw Decline() }
        return report
    }

    /// `{"network", "lowPowerMode", "thermalState", "tags"}`.
    private mutating func visitContext() throws(Decline) -> VisitContext {
        var network: VisitContext.Network?, lowPower: Bool?, thermal: VisitContext.ThermalState?, tags: [String: String]?
        var seen = Seen()
        try beginObject()
        if try !isEmptyObject() {
            repeat {
                let key = try key()
                if matches(key, "network") { try seen.insert(0); network = VisitContext.Network(rawValue: try string()) }
                else if matches(key, "lowPowerMode") { try seen.insert(1); lowPower = try boolean() }
                else if matches(key, "thermalState") { try seen.insert(2); thermal = VisitContext.ThermalState(rawValue: try string()) }
                else if matches(key, "tags") { try seen.insert(3); tags = try stringDictionary() }
                else { try skipValue() }
            } while try nextMember()
        }
        guard let network, let lowPower, let thermal, let tags else { throw Decline() }
        return VisitContext(network: network, lowPowerMode: lowPower, thermalState: thermal, tags: tags)
    }

    /// An object of strings; a key given twice is declined.
    private mutating func stringDictionary() throws(Decline) -> [String: String] {
        var result: [String: String] = [:]
        try beginObject()
        if try !isEmptyObject() {
            repeat {
                skipWhitespace()
                let key = try string()
                skipWhitespace()
                try expect(UInt8(ascii: ":"))
                guard result.updateValue(try string(), forKey: key) == nil else { throw Decline() }
            } while try nextMember()
        }
        return result
    }

    /// `[{"offset", "duration"}, ...]`.
    private mutating func hangList() throws(Decline) -> [HangRecord] {
        skipWhitespace()
        try expect(UInt8(ascii: "["))
        var hangs: [HangRecord] = []
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            index += 1
            return hangs
        }
        while true {
            var offset: Double?, duration: Double?
            var seen = Seen()
            try beginObject()
            if try !isEmptyObject() {
                repeat {
                    let key = try key()
                    if matches(key, "offset") { try seen.insert(0); offset = try double() }
                    else if matches(key, "duration") { try seen.insert(1); duration = try double() }
                    else { try skipValue() }
                } while try nextMember()
            }
            guard let offset, let duration else { throw Decline() }
            hangs.append(HangRecord(offset: offset, duration: duration))
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"): index += 1; return hangs
            default: throw Decline()
            }
        }
    }

    /// `{"cpuPercent", "residentBytes", "samples"}`.
    private mutating func resourceUsage() throws(Decline) -> ResourceUsage {
        var cpu: ResourceUsage.Summary?, resident: ResourceUsage.Summary?, samples: Int?
        var seen = Seen()
        try beginObject()
        if try !isEmptyObject() {
            repeat {
                let key = try key()
                if matches(key, "cpuPercent") { try seen.insert(0); cpu = try summary() }
                else if matches(key, "residentBytes") { try seen.insert(1); resident = try summary() }
                else if matches(key, "samples") { try seen.insert(2); samples = try integer() }
                else { try skipValue() }
            } while try nextMember()
        }
        guard let cpu, let resident, let samples else { throw Decline() }
        return ResourceUsage(cpuPercent: cpu, residentBytes: resident, samples: samples)
    }

    /// `{"frames", "hitchTime"}`; values ``MainThreadHitches`` would refuse are declined.
    private mutating func mainThreadHitchFigures() throws(Decline) -> MainThreadHitches {
        var frames: Int?, hitchTime: Double?
        var seen = Seen()
        try beginObject()
        if try !isEmptyObject() {
            repeat {
                let key = try key()
                if matches(key, "frames") { try seen.insert(0); frames = try integer() }
                else if matches(key, "hitchTime") { try seen.insert(1); hitchTime = try double() }
                else { try skipValue() }
            } while try nextMember()
        }
        guard let frames, let hitchTime, frames >= 0, hitchTime >= 0 else { throw Decline() }
        return MainThreadHitches(frames: frames, hitchTime: hitchTime)
    }

    /// `{"min", "mean", "max"}`.
    private mutating func summary() throws(Decline) -> ResourceUsage.Summary {
        var low: Double?, mean: Double?, high: Double?
        var seen = Seen()
        try beginObject()
        if try !isEmptyObject() {
            repeat {
                let key = try key()
                if matches(key, "min") { try seen.insert(0); low = try double() }
                else if matches(key, "mean") { try seen.insert(1); mean = try double() }
                else if matches(key, "max") { try seen.insert(2); high = try double() }
                else { try skipValue() }
            } while try nextMember()
        }
        guard let low, let mean, let high else { throw Decline() }
        return ResourceUsage.Summary(min: low, mean: mean, max: high)
    }

    // MARK: Objects

    /// The keys of one object already read, by position in its list of known keys.
    private struct Seen {
        private var bits: UInt16 = 0

        /// Records key `position`; a second time means a duplicated key, declined.
        mutating func insert(_ position: Int) throws(Decline) {
            let bit: UInt16 = 1 << position
            guard bits & bit == 0 else { throw Decline() }
            bits |= bit
        }
    }

    /// Reads `{`, counting the nesting.
    private mutating func beginObject() throws(Decline) {
        skipWhitespace()
        try expect(UInt8(ascii: "{"))
        depth += 1
        guard depth <= Self.maximumDepth else { throw Decline() }
    }

    /// Reads `}` if it comes next (an empty object) and then returns true.
    private mutating func isEmptyObject() throws(Decline) -> Bool {
        skipWhitespace()
        guard peek() == UInt8(ascii: "}") else { return false }
        index += 1
        depth -= 1
        return true
    }

    /// After a member's value: true after `,`, false after the closing `}`.
    private mutating func nextMember() throws(Decline) -> Bool {
        skipWhitespace()
        switch peek() {
        case UInt8(ascii: ","):
            index += 1
            return true
        case UInt8(ascii: "}"):
            index += 1
            depth -= 1
            return false
        default:
            throw Decline()
        }
    }

    /// A member's key up to and including the `:`: printable ASCII without escapes (any
    /// other key is declined, so that an escaped spelling of a known key cannot slip by).
    private mutating func key() throws(Decline) -> Range<Int> {
        skipWhitespace()
        try expect(UInt8(ascii: "\""))
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") { break }
            guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\\") else { throw Decline() }
            index += 1
        }
        guard index < bytes.count else { throw Decline() }
        let range = start..<index
        index += 1
        skipWhitespace()
        try expect(UInt8(ascii: ":"))
        return range
    }

    /// Whether the key at `range` is `name`.
    private func matches(_ range: Range<Int>, _ name: StaticString) -> Bool {
        guard range.count == name.utf8CodeUnitCount else { return false }
        return name.withUTF8Buffer { text in
            for offset in 0..<text.count where bytes[range.lowerBound + offset] != text[offset] { return false }
            return true
        }
    }

    // MARK: Values

    /// A string, with its escapes decoded and its UTF-8 checked.
    private mutating func string() throws(Decline) -> String {
        skipWhitespace()
        try expect(UInt8(ascii: "\""))
        let start = index
        var plainASCII = true
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") { break }
            guard byte >= 0x20 else { throw Decline() }
            if byte == UInt8(ascii: "\\") {
                plainASCII = false
                index += 2
                continue
            }
            if byte >= 0x80 { plainASCII = false }
            index += 1
        }
        guard index < bytes.count else { throw Decline() }
        let content = UnsafeRawBufferPointer(rebasing: bytes[start..<index])
        index += 1
        if plainASCII { return String(decoding: content, as: UTF8.self) }
        return try Self.unescape(content)
    }

    /// The text of a string's content (between its quotes) that holds escapes or non-ASCII bytes.
    private static func unescape(_ content: UnsafeRawBufferPointer) throws(Decline) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(content.count)
        var position = 0
        func hex4() throws(Decline) -> UInt32 {
            guard position + 4 <= content.count else { throw Decline() }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = content[position]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: throw Decline()
                }
                value = value << 4 | UInt32(digit)
                position += 1
            }
            return value
        }
        while position < content.count {
            let byte = content[position]
            position += 1
            guard byte == UInt8(ascii: "\\") else {
                out.append(byte)
                continue
            }
            guard position < content.count else { throw Decline() }
            let escape = content[position]
            position += 1
            switch escape {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800..<0xDC00).contains(scalar) {
                    // A high surrogate must be followed by an escaped low one.
                    guard position + 2 <= content.count, content[position] == UInt8(ascii: "\\"),
                          content[position + 1] == UInt8(ascii: "u") else { throw Decline() }
                    position += 2
                    let low = try hex4()
                    guard (0xDC00..<0xE000).contains(low) else { throw Decline() }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let value = Unicode.Scalar(scalar) else { throw Decline() }
                UTF8.encode(value) { out.append($0) }
            default:
                throw Decline()
            }
        }
        guard let text = String(validating: out, as: UTF8.self) else { throw Decline() }
        return text
    }

    /// `null` if it comes next (read, true); otherwise nothing is read (false).
    private mutating func null() throws(Decline) -> Bool {
        skipWhitespace()
        guard peek() == UInt8(ascii: "n") else { return false }
        try literal("null")
        return true
    }

    /// `true` or `false`.
    private mutating func boolean() throws(Decline) -> Bool {
        skipWhitespace()
        switch peek() {
        case UInt8(ascii: "t"): try literal("true"); return true
        case UInt8(ascii: "f"): try literal("false"); return false
        default: throw Decline()
        }
    }

    /// A JSON number, as `JSONDecoder` reads a `Double`; out of range (it would refuse
    /// the body) is declined.
    private mutating func double() throws(Decline) -> Double {
        let range = try number()
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[range]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else { throw Decline() }
        if value == 0 {
            // An underflow to zero (1e-400) is declined; only written zeros are zero.
            var position = range.lowerBound
            while position < range.upperBound, bytes[position] != UInt8(ascii: "e"), bytes[position] != UInt8(ascii: "E") {
                if bytes[position] >= UInt8(ascii: "1"), bytes[position] <= UInt8(ascii: "9") { throw Decline() }
                position += 1
            }
        }
        return value
    }

    /// A JSON number written as a whole number within `Int`'s range (`-0` is 0); a
    /// fraction or exponent is declined.
    private mutating func integer() throws(Decline) -> Int {
        let range = try number()
        var position = range.lowerBound
        let negative = bytes[position] == UInt8(ascii: "-")
        if negative { position += 1 }
        var value = 0
        while position < range.upperBound {
            let byte = bytes[position]
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { throw Decline() }
            let digit = Int(byte - UInt8(ascii: "0"))
            let (times, overflowTimes) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowSum) = negative ? times.subtractingReportingOverflow(digit) : times.addingReportingOverflow(digit)
            guard !overflowTimes, !overflowSum else { throw Decline() }
            value = sum
            position += 1
        }
        return value
    }

    /// The bytes of a number in JSON's grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    private mutating func number() throws(Decline) -> Range<Int> {
        skipWhitespace()
        let start = index
        if peek() == UInt8(ascii: "-") { index += 1 }
        if peek() == UInt8(ascii: "0") {
            index += 1
        } else {
            guard digits() > 0 else { throw Decline() }
        }
        if peek() == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { throw Decline() }
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            index += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { throw Decline() }
        }
        return start..<index
    }

    /// Reads decimal digits; returns how many.
    private mutating func digits() -> Int {
        let start = index
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") { index += 1 }
        return index - start
    }

    /// Checks and reads any JSON value without keeping it.
    private mutating func skipValue() throws(Decline) {
        skipWhitespace()
        switch peek() {
        case UInt8(ascii: "\""):
            _ = try string()
        case UInt8(ascii: "{"):
            try beginObject()
            if try !isEmptyObject() {
                repeat {
                    skipWhitespace()
                    _ = try string()
                    skipWhitespace()
                    try expect(UInt8(ascii: ":"))
                    try skipValue()
                } while try nextMember()
            }
        case UInt8(ascii: "["):
            index += 1
            depth += 1
            guard depth <= Self.maximumDepth else { throw Decline() }
            skipWhitespace()
            if peek() == UInt8(ascii: "]") {
                index += 1
            } else {
                while true {
                    try skipValue()
                    skipWhitespace()
                    if peek() == UInt8(ascii: "]") { index += 1; break }
                    try expect(UInt8(ascii: ","))
                }
            }
            depth -= 1
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        default: _ = try number()
        }
    }

    // MARK: Bytes

    /// The next byte, or 0 at the end (never valid where a byte is expected).
    private func peek() -> UInt8 {
        index < bytes.count ? bytes[index] : 0
    }

    private mutating func expect(_ byte: UInt8) throws(Decline) {
        guard peek() == byte else { throw Decline() }
        index += 1
    }

    private mutating func literal(_ word: StaticString) throws(Decline) {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw Decline() }
        let start = index
        let same = word.withUTF8Buffer { text in
            (0..<text.count).allSatisfy { bytes[start + $0] == text[$0] }
        }
        guard same else { throw Decline() }
        index += count
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }
}
