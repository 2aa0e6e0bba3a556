import FramescopeCore

/// The raw event the collector stores: a compact, canonical JSON re-encoding of the event
/// it validated, not the bytes the device sent.
///
/// Storing what was sent kept members nobody checked (an unknown member of 14 KB, stored
/// for 30 days, made the database grow 560 times faster than the attacker uploaded), kept
/// line feeds of pretty-printed JSON (one event became many NDJSON lines in the export),
/// and kept a repeated member's second value that the collector never read. This form has
/// exactly the members of ``ScreenVisitEvent`` in a fixed order, no insignificant
/// whitespace (so one event is one line), reports in their binary form (`reportData`,
/// `motionData`, as the SDK sends them), hangs without their sampled stacks (those are
/// stored once, in the hangs table, and `idle` only when true), tags with their keys in byte order, strings in
/// NFC as validated (``CanonicalText``), and numbers in Swift's shortest round-trip form.
/// `JSONDecoder` reads it back to the same ``ScreenVisitEvent``, but for its hangs' stacks
/// (left out) and an `idle` that was `false` (read back as absent).
package enum StoredEventJSON {
    /// The canonical JSON of `event`, on one line.
    package static func encode(_ event: ScreenVisitEvent) -> String {
        var out = JSONWriter()
        out.raw("{\"kind\":")
        out.string(event.kind)
        out.raw(",\"screen\":")
        out.string(event.screen)
        out.raw(",\"startedAt\":")
        out.string(event.startedAt)
        out.raw(",\"duration\":")
        out.number(event.duration)
        out.raw(",\"context\":{\"network\":")
        out.string(event.context.network.rawValue)
        out.raw(",\"lowPowerMode\":")
        out.raw(event.context.lowPowerMode ? "true" : "false")
        out.raw(",\"thermalState\":")
        out.string(event.context.thermalState.rawValue)
        out.raw(",\"tags\":{")
        let tags = event.context.tags.sorted { StoredText($0.key) < StoredText($1.key) }
        for (index, (key, value)) in tags.enumerated() {
            if index > 0 { out.raw(",") }
            out.string(key)
            out.raw(":")
            out.string(value)
        }
        out.raw("}},\"reportData\":")
        out.string(Base64.encode(event.report.binaryEncoded()))
        out.raw(",\"motionData\":")
        if let motion = event.motion { out.string(Base64.encode(motion.binaryEncoded())) } else { out.raw("null") }
        out.raw(",\"hangs\":[")
        for (index, hang) in event.hangs.enumerated() {
            if index > 0 { out.raw(",") }
            out.raw("{\"offset\":")
            out.number(hang.offset)
            out.raw(",\"duration\":")
            out.number(hang.duration)
            if hang.idle == true { out.raw(",\"idle\":true") }
            out.raw("}")
        }
        out.raw("]")
        if let resources = event.resources {
            out.raw(",\"resources\":{\"cpuPercent\":")
            out.summary(resources.cpuPercent)
            out.raw(",\"residentBytes\":")
            out.summary(resources.residentBytes)
            out.raw(",\"samples\":")
            out.raw(String(resources.samples))
            out.raw("}")
        }
        if let hitches = event.mainThreadHitches {
            out.raw(",\"mainThreadHitches\":{\"frames\":")
            out.raw(String(hitches.frames))
            out.raw(",\"hitchTime\":")
            out.number(hitches.hitchTime)
            out.raw("}")
        }
        out.raw("}")
        return String(decoding: out.bytes, as: UTF8.self)
    }
}

/// Appends JSON text to a byte buffer: strings escaped per Unicode scalar (quote,
/// backslash and C0 controls; everything else as UTF-8), finite numbers in their shortest
/// round-trip form.
package struct JSONWriter {
    package private(set) var bytes: [UInt8] = []

    package init() {
        bytes.reserveCapacity(512)
    }

    /// `text` as it is (punctuation and literals).
    package mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// `text` as it is (numbers already formatted).
    package mutating func raw(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    /// `text` as a JSON string.
    package mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): raw("\\\"")
            case UInt8(ascii: "\\"): raw("\\\\")
            case 0x0A: raw("\\n")
            case 0x0D: raw("\\r")
            case 0x09: raw("\\t")
            case 0..<0x20:
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                raw("\\u00")
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// A finite `value` in Swift's shortest round-trip form (`0.5`, `1e-07`), which is
    /// JSON; a non-finite value (never validated) as `0`.
    package mutating func number(_ value: Double) {
        guard value.isFinite else { raw("0"); return }
        raw(value.description)
    }

    /// `{"min", "mean", "max"}`.
    package mutating func summary(_ summary: ResourceUsage.Summary) {
        raw("{\"min\":")
        number(summary.min)
        raw(",\"mean\":")
        number(summary.mean)
        raw(",\"max\":")
        number(summary.max)
        raw("}")
    }
}
