import FramescopeCore

extension HangGroup {
    /// Image id → the offsets `groups`' frames are looked up at (every stack frame's and
    /// the dominant frame's ``HangFrame/lookupOffset``): what the answer names
    /// (``SymbolCache/tables(app:lookups:store:)``).
    static func lookups(_ groups: [HangGroup]) -> [String: Set<UInt64>] {
        var lookups: [String: Set<UInt64>] = [:]
        for group in groups {
            for frame in group.stack { lookups[frame.imageId, default: []].insert(frame.lookupOffset) }
            if let dominant = group.dominant { lookups[dominant.imageId, default: []].insert(dominant.lookupOffset) }
        }
        return lookups
    }

    /// `groups` with their dominant frames mapped through `tables`: groups whose dominant
    /// frames lie in one function of one image, in any of the compiler's clones of it
    /// (``CloneNote``), are one group (counts, times and fatal hangs summed, screens and
    /// versions joined (those of the part with more hangs first), first and last seen
    /// widened, the stack of the part with the most hangs kept, then of the most time), named `` <image>`<function> `` without clone notes; ordered by total
    /// time again.
    ///
    /// This is how a signature stored as `<image id>+0x<offset>` before the build's symbols
    /// arrived, or two call sites in one function, become one group without rewriting a row.
    /// The image in a merged name is the one `names` (the uploaded symbols' file names, by
    /// image id) gives, else the device's.
    static func merged(_ groups: [HangGroup], tables: [String: SymbolTableBlob], names: [String: String] = [:]) -> [HangGroup] {
        var order: [String] = []
        var merged: [String: HangGroup] = [:]
        var shown: [String: (hangs: Int, duration: Double)] = [:]  // the part whose stack a merged group shows
        for group in groups {
            var key = group.signature
            if let dominant = group.dominant, let name = tables[dominant.imageId]?.name(at: dominant.lookupOffset) {
                key = "\(names[dominant.imageId] ?? dominant.image)`\(CloneNote.function(of: name))"
            }
            guard var existing = merged[key] else {
                var named = group
                named.signature = key
                merged[key] = named
                shown[key] = (group.hangs, group.duration)
                order.append(key)
                continue
            }
            // The stack of the part with the most hangs (then time): one long hang in a part
            // of its own cannot replace what the function's hangs show.
            if let part = shown[key], (group.hangs, group.duration) > (part.hangs, part.duration) {
                shown[key] = (group.hangs, group.duration)
                existing.dominant = group.dominant
                existing.stack = group.stack
            }
            existing.hangs += group.hangs
            existing.fatal += group.fatal
            existing.duration += group.duration
            existing.screens = joined(existing.screens, group.screens, largerFirst: group.hangs > existing.hangs)
            existing.appVersions = joined(existing.appVersions, group.appVersions, largerFirst: group.hangs > existing.hangs)
            existing.firstSeen = min(existing.firstSeen, group.firstSeen)
            existing.lastSeen = max(existing.lastSeen, group.lastSeen)
            merged[key] = existing
        }
        return order.compactMap { merged[$0] }.sorted { ($1.duration, StoredText($0.signature)) < ($0.duration, StoredText($1.signature)) }
    }

    /// The texts of `a` and those of `b` not in it, `b`'s first when `largerFirst`.
    private static func joined(_ a: [String], _ b: [String], largerFirst: Bool) -> [String] {
        let (first, second) = largerFirst ? (b, a) : (a, b)
        var seen = Set(first.map(StoredText.init))
        return first + second.filter { seen.insert(StoredText($0)).inserted }
    }
}
