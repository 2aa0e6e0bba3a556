#if os(Linux)
import CFramescopeStack

extension ImageTable {
    /// The images loaded now, from `dl_iterate_phdr` (`fs_images`): path, load bias, extent,
    /// code ranges and GNU build id of each.
    ///
    /// ``Image/isApp`` marks the images in the executable's folder. ``Image/omitsFramePointers``
    /// marks every image outside that folder and outside the Swift runtime's (the folder of
    /// `libswiftCore.so`): Swift code and the toolchain's libraries keep frame pointers, the
    /// distribution's C libraries (Debian 12's glibc) do not.
    ///
    /// Call it on the sampler's thread, never while a sample is taken: it takes the loader's
    /// lock and allocates. Cost: 0.9–1.6 ms for the 57 images of the SDK's test process (debug
    /// build, `StackSamplerFigures`), paid once per hang before its first sample.
    static func loaded() -> ImageTable {
        final class Collector {
            var images: [Image] = []
            var executableFolder: Substring?
        }
        let collector = Collector()
        withExtendedLifetime(collector) {
            _ = fs_images({ info, context in
                guard let info, let context else { return }
                let collector = Unmanaged<Collector>.fromOpaque(context).takeUnretainedValue()
                let image = info.pointee
                let path = String(cString: image.path)
                let id = withUnsafeBytes(of: image.build_id) { bytes in
                    ImageTable.hex(bytes.prefix(Swift.min(image.build_id_length, bytes.count)))
                }
                var text: [Range<UInt64>] = []
                withUnsafeBytes(of: image.text_start) { starts in
                    withUnsafeBytes(of: image.text_end) { ends in
                        for index in 0..<Swift.min(image.text_count, 8) {
                            let start = UInt64(starts.load(fromByteOffset: index * 8, as: UInt.self))
                            let end = UInt64(ends.load(fromByteOffset: index * 8, as: UInt.self))
                            if start < end { text.append(start..<end) }
                        }
                    }
                }
                if image.is_executable != 0 { collector.executableFolder = folder(of: path) }
                collector.images.append(Image(id: id, path: path, base: UInt64(image.bias), size: image.extent,
                                              text: text, isApp: false, omitsFramePointers: false))
            }, Unmanaged.passUnretained(collector).toOpaque())
        }
        let appFolder = collector.executableFolder
        let swiftFolder = collector.images.first { $0.name == "libswiftCore.so" }.map { folder(of: $0.path) }
        let images = collector.images.map { image in
            var image = image
            let home = folder(of: image.path)
            image.isApp = appFolder != nil && home == appFolder && !image.path.isEmpty
            image.omitsFramePointers = !(image.isApp || (swiftFolder != nil && home == swiftFolder))
            return image
        }
        return ImageTable(images: images)
    }
}

/// The folder part of `path` (up to its last `/`), or `""`.
private func folder(of path: String) -> Substring {
    path.lastIndex(of: "/").map { path[..<$0] } ?? ""
}
#endif
