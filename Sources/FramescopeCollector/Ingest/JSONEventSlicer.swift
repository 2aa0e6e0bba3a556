import FramescopeJSON

/// Finds the bytes of each element of a JSON body's top-level `"events"` array, so the
/// collector can store each accepted event exactly as it was sent instead of encoding it
/// again (which cost more CPU than decoding it).
///
/// One pass of the shared strict scanner (``JSONScanner/elementRanges(ofMember:in:)``).
/// Returns `nil` when the body is not shaped as expected (no `"events"` key written
/// plainly, not an array, not valid JSON), and the caller then encodes the events itself.
enum JSONEventSlicer {
    /// Byte ranges of the `"events"` array's elements, in order.
    static func eventRanges(in bytes: UnsafeRawBufferPointer) -> [Range<Int>]? {
        JSONScanner.elementRanges(ofMember: "events", in: bytes)
    }
}
