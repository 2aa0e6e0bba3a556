import CompressNIO
import Foundation
import FramescopeCore
import FramescopeJSON
import Hummingbird
import NIOCore

/// The batch in `body`.
///
/// ``WireBatchDecoder`` decodes well-formed batches; any body it declines (an invalid
/// event, malformed JSON, an unusual spelling, an unknown or repeated member) is decoded by
/// `JSONDecoder`, whose errors become the 400 (`invalid_json`, or `invalid_field` with the
/// field's path) and whose per-event failures become the rejections.
///
/// A member whose key appears twice in one object is refused (parsers disagree on which
/// value counts, so the second could reach a reader of the export unchecked): in the
/// envelope with 400 `invalid_field` naming it, inside an event as that event's rejection.
func decodeBatch(_ body: ByteBuffer) throws -> WireBatch {
    if let decoded = body.withUnsafeReadableBytes({ WireBatchDecoder.decode($0) }) {
        return decoded
    }
    var batch: WireBatch
    do {
        batch = try JSONDecoder().decode(WireBatch.self, from: Data(buffer: body))
    } catch let error as DecodingError {
        let field = error.fieldPath
        if case .dataCorrupted = error, field.isEmpty {
            throw CollectorError(.badRequest, .invalidJSON, message: invalidJSONMessage(Data(buffer: body)))
        }
        throw CollectorError(.badRequest, .invalidField, field: field.isEmpty ? nil : field, message: error.reason)
    }
    try body.withUnsafeReadableBytes { try refuseRepeatedMembers(in: $0, of: &batch) }
    return batch
}

/// Applies the rule on repeated members to `batch`, decoded by `JSONDecoder` from
/// `bytes`: a repeated member in the envelope throws 400 `invalid_field` naming it; one
/// inside an event that decoded turns that event into a rejection naming it.
func refuseRepeatedMembers(in bytes: UnsafeRawBufferPointer, of batch: inout WireBatch) throws {
    for path in JSONScanner.repeatedMembers(in: bytes) ?? [] {
        guard case let .member(key)? = path.last else { continue }
        let message = "member '\(key)' appears more than once in its object"
        if path.count >= 3, path[0] == .member("events"), case let .element(index) = path[1], batch.events.indices.contains(index) {
            if case .success = batch.events[index].result {
                batch.events[index].result = .failure(.dataCorrupted(.init(codingPath: path.codingKeys, debugDescription: message)))
            }
        } else {
            throw CollectorError(.badRequest, .invalidField, field: path.fieldPath, message: message)
        }
    }
}

extension Array where Element == JSONPathComponent {
    /// The path as coding keys, for a `DecodingError`'s context.
    fileprivate var codingKeys: [any CodingKey] {
        map { component -> any CodingKey in
            switch component {
            case let .member(key): PathKey(stringValue: key)
            case let .element(index): PathKey(intValue: index)
            }
        }
    }
}

/// A coding key made from a path component (also the path of a rejection the wire decoder
/// makes as `JSONDecoder` would).
struct PathKey: CodingKey {
    var stringValue: String
    var intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
    }

    init(intValue: Int) {
        stringValue = "\(intValue)"
        self.intValue = intValue
    }
}

/// Decompresses a gzip body, refusing output over `limit` bytes (a gzip bomb) with 413
/// and damaged data with 400.
func gunzip(_ body: ByteBuffer, limit: Int) throws -> ByteBuffer {
    var input = body
    let output: ByteBuffer
    do {
        output = try input.decompress(with: .gzip(), maxSize: limit)
    } catch let error as CompressNIOError where error == .bufferOverflow {
        throw CollectorError(.contentTooLarge, .decompressedTooLarge, field: "Content-Encoding",
                             message: "the body decompresses to more than \(limit >> 20) MiB")
    } catch {
        throw CollectorError(.badRequest, .invalidGzip, field: "Content-Encoding", message: "the body is not valid gzip data")
    }
    // The decompressor may overshoot its limit by up to one buffer before it stops.
    guard output.readableBytes <= limit else {
        throw CollectorError(.contentTooLarge, .decompressedTooLarge, field: "Content-Encoding",
                             message: "the body decompresses to more than \(limit >> 20) MiB")
    }
    // A stream cut short still inflates to what it held: its last four bytes (ISIZE, the
    // length modulo 2³²) then do not match, and the body is refused as gzip, not as JSON.
    let view = body.readableBytesView
    guard view.count >= 18 else {
        throw CollectorError(.badRequest, .invalidGzip, field: "Content-Encoding", message: "the body is not valid gzip data")
    }
    let trailer = view.suffix(4)
    let size = trailer.reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    guard size == UInt32(truncatingIfNeeded: output.readableBytes) else {
        throw CollectorError(.badRequest, .invalidGzip, field: "Content-Encoding",
                             message: "the gzip data is cut short or damaged (its trailer does not match)")
    }
    return output
}

/// What is wrong with a body that is not JSON, in the words of Foundation's parser, which
/// says where it stopped ("Invalid value around character 12.", "Number 1e400 is not
/// representable in Swift."): JSONDecoder on Linux does not. Parses again, on this error
/// path only.
func invalidJSONMessage(_ body: Data) -> String {
    do {
        _ = try JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed])
    } catch {
        if let detail = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String {
            return "the body is not valid JSON: \(detail.prefix(200))"
        }
    }
    return "the body is not valid JSON"
}
