import Foundation
import Hummingbird

/// The request's `Transfer-Encoding`, checked before any route runs.
///
/// HTTP/1.1 frames a request body by `Content-Length` or by the `chunked` coding, and
/// Hummingbird decodes no other coding. NIO's parser reports a bad `Transfer-Encoding`
/// (`xchunked`) only after it has passed the request head on, as an error from the body,
/// which used to become a 500 with two error-level log lines per request.
enum TransferCoding {
    /// The answer for a request whose `Transfer-Encoding` the collector cannot read, or
    /// `nil` when it can (none, or `chunked` alone).
    ///
    /// - `chunked` not last, or more than once (`xchunked`, `gzip`, `chunked, chunked`): 400
    ///   `invalid_transfer_encoding`, and the connection is closed (RFC 9112 §6.3: the body's
    ///   length cannot be known).
    /// - another coding before `chunked` (`gzip, chunked`): 501 `unsupported_transfer_encoding`
    ///   (RFC 9112 §6.1); compress the body with `Content-Encoding: gzip` instead.
    static func problem(in headers: HTTPFields) -> CollectorError? {
        let values = headers[values: .transferEncoding]
        guard !values.isEmpty else { return nil }
        let codings = values.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        let shown = String(values.joined(separator: ", ").unicodeScalars.prefix(64).map { $0.isASCII && $0.value >= 0x20 ? Character($0) : "?" })
        if codings.last != "chunked" || codings.filter({ $0 == "chunked" }).count > 1 {
            return CollectorError(.badRequest, .invalidTransferEncoding, field: "Transfer-Encoding",
                                  message: "Transfer-Encoding '\(shown)' does not end in chunked once, so the body's length is unknown; "
                                      + "send Content-Length or Transfer-Encoding: chunked",
                                  headers: [.connection: "close"])
        }
        if codings.count > 1 {
            return CollectorError(.notImplemented, .unsupportedTransferEncoding, field: "Transfer-Encoding",
                                  message: "Transfer-Encoding '\(shown)' is not supported; send the body chunked or with Content-Length, "
                                      + "compressed with Content-Encoding: gzip",
                                  headers: [.connection: "close"])
        }
        return nil
    }
}
