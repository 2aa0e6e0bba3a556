import CFramescopeStack

/// The images (executable, shared libraries) loaded in the process, sorted by base, to turn
/// raw code addresses into (image, offset) pairs that survive ASLR.
///
/// Built on the sampler's thread, outside any sampling window: by ``loaded()`` from
/// `dl_iterate_phdr` on Linux (`ImageTable+Linux.swift`), from dyld and the images' load
/// commands on Apple platforms (`ImageTable+Darwin.swift`); tests build tables of made-up
/// images.
struct ImageTable: Sendable {
    /// One loaded image.
    struct Image: Sendable, Hashable {
        /// The image's build identity in lowercase hex (an ELF GNU build id, a Mach-O
        /// `LC_UUID`); empty when it has none, and then its frames cannot be sent.
        var id: String
        /// The file's path (the executable's resolved through `/proc/self/exe` on Linux).
        var path: String
        /// The address offsets count from, in bytes: the load bias on Linux (memory address
        /// minus the file's virtual address), the Mach-O header on Apple platforms.
        var base: UInt64
        /// The image's extent from ``base``, in bytes: every address of it is below
        /// `base + size`.
        var size: UInt64
        /// Its executable code in memory, as address ranges.
        var text: [Range<UInt64>]
        /// Whether it is the app's own code: on Linux an image in the executable's folder, on
        /// Apple platforms the executable and the images inside the app bundle.
        var isApp: Bool
        /// Whether its code may run without frame pointers (Debian's C library): the walk then
        /// looks for the caller's return address on the stack (`fs_walk_frames`).
        var omitsFramePointers: Bool

        /// The file name without its folder.
        var name: Substring {
            path.lastIndex(of: "/").map { path[path.index(after: $0)...] } ?? path[...]
        }
    }

    /// The images, sorted by ``Image/base``.
    let images: [Image]
    /// Every image's code ranges, sorted by start, flagged `FS_TEXT_FRAMELESS` where the image
    /// omits frame pointers: what `fs_walk_frames` consults.
    let textRanges: [fs_text_range]

    /// A table of `images` (any order).
    init(images: [Image]) {
        self.images = images.sorted { $0.base < $1.base }
        textRanges = images.flatMap { image in
            image.text.map { range in
                fs_text_range(start: UInt(range.lowerBound), end: UInt(range.upperBound),
                              flags: image.omitsFramePointers ? UInt32(FS_TEXT_FRAMELESS) : 0)
            }
        }.sorted { $0.start < $1.start }
    }

    /// The image holding `address` and the address's offset from its base (bytes), or `nil`
    /// when no image holds it.
    ///
    /// - Complexity: O(log n) for n images.
    func lookup(_ address: UInt64) -> (index: Int, offset: UInt64)? {
        // The last image whose base is at or below the address.
        var low = 0, high = images.count
        while low < high {
            let middle = (low + high) / 2
            if images[middle].base <= address { low = middle + 1 } else { high = middle }
        }
        guard low > 0 else { return nil }
        let image = images[low - 1]
        let offset = address - image.base
        return offset < image.size ? (low - 1, offset) : nil
    }

    /// `bytes` in lowercase hex, two digits each: an image's ``Image/id``.
    static func hex<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
