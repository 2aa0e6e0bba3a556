/// How many hang rows with stacks one request may store, by the bytes it was sent as (issue
/// 43, item 3): the rule that keeps bytes stored per byte received bounded however far a body
/// compresses.
///
/// gzip squeezes a body of repeated parts about 1,000 to 1: a MetricKit body of 1,000 alike
/// payloads with 32 one-frame hang diagnostics each is 45 KiB sent and made 32,000 hang rows
/// (200 bytes stored a byte sent, about 230 bytes a row with its indexes). Every row must
/// therefore cost the sender some bytes: a request may store one hang row per
/// ``sentBytesPerRow`` bytes it was sent as (gzip as sent, plain as is). A real hang diagnostic
/// sends its call-stack tree, a binary UUID and an offset a frame, hundreds of bytes however
/// it is compressed, so no real body meets the allowance; a hang past it still counts in its
/// payload's figures (hang time, diagnostics), only its stack is not stored, and the answer
/// says so.
public struct HangRowAllowance: Sendable, Hashable {
    /// Bytes sent per hang row a request may store: 8, which bounds the rows of the most
    /// compressible body at about 30 bytes stored a byte sent (docs/security.md).
    public static let sentBytesPerRow = 8

    /// Rows the request may still store.
    public private(set) var remaining: Int

    /// The allowance of a request sent as `sentBytes` bytes.
    public init(sentBytes: Int) {
        remaining = max(0, sentBytes) / Self.sentBytesPerRow
    }

    /// Takes one row of the allowance: whether there was one left.
    public mutating func take() -> Bool {
        guard remaining > 0 else { return false }
        remaining -= 1
        return true
    }
}
