import FramescopeCore

extension HangGroup {
    /// The image ids of every frame of `groups`' stacks.
    static func imageIds(_ groups: [HangGroup]) -> Set<String> {
        Set(groups.flatMap { $0.stack.map(\.imageId) })
    }

    /// `groups` with their dominant frames mapped through `tables`: groups whose dominant
    /// frames lie in one function of one image, in any of the compiler's clones of it
    /// (``CloneNote``), are one group (counts, times and fatal hangs summed, screens and
    /// versions joined, first and last seen widened, the stack of the group with the most
    /// hang time kept), named `` <image>`<function> `` without clone notes; ordered by total
    /// time again.
    ///
    /// This is how a signature stored as `<image id>+0x<offset>` before the build's symbols
    /// arrived, or two call sites in one function, become one group without rewriting a row.
    static func merged(_ groups: [HangGroup], tables: [String: SymbolTableBlob]) -> [HangGroup] {
        var order: [String] = []
        var merged: [String: HangGroup] = [:]
        for group in groups {
            var key = group.signature
            if let dominant = group.dominant, let name = tables[dominant.imageId]?.name(at: dominant.lookupOffset) {
                key = "\(dominant.image)`\(CloneNote.function(of: name))"
            }
            guard var existing = merged[key] else {
                var named = group
                named.signature = key
                merged[key] = named
                order.append(key)
                continue
            }
            if group.duration > existing.duration {
                existing.dominant = group.dominant
                existing.stack = group.stack
            }
            existing.hangs += group.hangs
            existing.fatal += group.fatal
            existing.duration += group.duration
            existing.screens = Set((existing.screens + group.screens).map(StoredText.init)).sorted().map(\.text)
            existing.appVersions = Set((existing.appVersions + group.appVersions).map(StoredText.init)).sorted().map(\.text)
            existing.firstSeen = min(existing.firstSeen, group.firstSeen)
            existing.lastSeen = max(existing.lastSeen, group.lastSeen)
            merged[key] = existing
        }
        return order.compactMap { merged[$0] }.sorted { ($1.duration, StoredText($0.signature)) < ($0.duration, StoredText($1.signature)) }
    }
}
