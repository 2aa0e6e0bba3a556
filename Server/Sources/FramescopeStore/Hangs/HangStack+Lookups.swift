import FramescopeCore

extension HangStack {
    /// Adds to `lookups` (image id → offsets, bytes from the image's base) every offset a
    /// symbol table may be asked for to name this stack's frames in the images `include`
    /// accepts: each frame's offset as the interrupted instruction and as a return address
    /// (``HangStack/Frame/lookupOffset(isFirst:)``), since which one a frame is depends on
    /// the sample. What ``SymbolCache/tables(app:lookups:store:)`` reads chunks for.
    package func addLookups(to lookups: inout [String: Set<UInt64>], where include: (HangStack.Image) -> Bool) {
        for frame in frames where images.indices.contains(frame.image) && include(images[frame.image]) {
            lookups[images[frame.image].id, default: []].formUnion([frame.lookupOffset(isFirst: true), frame.lookupOffset(isFirst: false)])
        }
    }
}
