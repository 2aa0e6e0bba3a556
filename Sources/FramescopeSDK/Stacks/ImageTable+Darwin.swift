#if canImport(Darwin)
import Darwin
import Foundation
import MachO

extension ImageTable {
    /// The images loaded now, from dyld (`_dyld_image_count`, `_dyld_get_image_header`,
    /// `_dyld_get_image_name`, `_dyld_get_image_vmaddr_slide`, all iOS 2.0) and each image's
    /// load commands: its `LC_UUID` (``Image/id``), its `__TEXT` segment's `vmsize`
    /// (``Image/size``) and its `__TEXT,__text` section (``Image/text``; the whole segment when
    /// it has none).
    ///
    /// ``Image/base`` is the Mach-O header's address, so offsets are what MetricKit calls
    /// `offsetIntoBinaryTextSegment`. ``Image/isApp`` marks the executable and the images inside
    /// the app bundle (`Bundle.main.bundlePath`, its `Frameworks/` included).
    /// ``Image/omitsFramePointers`` is false for all: Apple's arm64 and x86_64 ABIs keep frame
    /// pointers. Images other than 64-bit Mach-O are left out.
    ///
    /// Call it on the sampler's thread, never while a sample is taken: it allocates.
    static func loaded() -> ImageTable {
        let bundle = withoutPrivate(Bundle.main.bundlePath) + "/"
        var images: [Image] = []
        for index in 0..<_dyld_image_count() {
            // An image unloaded meanwhile has no header or name any more: skipped.
            guard let header = _dyld_get_image_header(index), let name = _dyld_get_image_name(index) else { continue }
            let path = String(cString: name)
            guard var image = machImage(at: UnsafeRawPointer(header), slide: _dyld_get_image_vmaddr_slide(index),
                                        path: path) else { continue }
            image.isApp = image.isApp || withoutPrivate(path).hasPrefix(bundle)
            images.append(image)
        }
        return ImageTable(images: images)
    }

    /// The image whose 64-bit Mach-O header is at `header` (loaded `slide` bytes away from its
    /// file's addresses), read from its load commands, or `nil` when it is not 64-bit Mach-O
    /// or has no `__TEXT` segment. ``Image/isApp`` is set for an executable (`MH_EXECUTE`)
    /// only. Every read lies inside the header and its `sizeofcmds` bytes of load commands.
    private static func machImage(at header: UnsafeRawPointer, slide: Int, path: String) -> Image? {
        let mach = header.loadUnaligned(as: mach_header_64.self)
        guard mach.magic == MH_MAGIC_64 else { return nil }
        let base = UInt64(UInt(bitPattern: header))
        var id = "", size: UInt64?, text: [Range<UInt64>] = []
        var offset = MemoryLayout<mach_header_64>.size
        let end = offset + Int(mach.sizeofcmds)
        for _ in 0..<mach.ncmds {
            guard offset + MemoryLayout<load_command>.size <= end else { break }
            let command = header.loadUnaligned(fromByteOffset: offset, as: load_command.self)
            let length = Int(command.cmdsize)
            guard length >= MemoryLayout<load_command>.size, length <= end - offset else { break }
            if command.cmd == LC_UUID, length >= MemoryLayout<uuid_command>.size {
                let uuid = header.loadUnaligned(fromByteOffset: offset, as: uuid_command.self).uuid
                id = withUnsafeBytes(of: uuid) { ImageTable.hex($0) }
            } else if command.cmd == LC_SEGMENT_64, length >= MemoryLayout<segment_command_64>.size {
                let segment = header.loadUnaligned(fromByteOffset: offset, as: segment_command_64.self)
                if fixedName(segment.segname) == SEG_TEXT {
                    size = segment.vmsize
                    let first = offset + MemoryLayout<segment_command_64>.size
                    let fitting = (length - MemoryLayout<segment_command_64>.size) / MemoryLayout<section_64>.size
                    for number in 0..<min(Int(segment.nsects), fitting) {
                        let section = header.loadUnaligned(fromByteOffset: first + number * MemoryLayout<section_64>.size,
                                                           as: section_64.self)
                        guard fixedName(section.sectname) == SECT_TEXT, section.size > 0 else { continue }
                        let start = section.addr &+ UInt64(bitPattern: Int64(slide))
                        text.append(start..<(start &+ section.size))
                    }
                }
            }
            offset += length
        }
        guard let size, size > 0 else { return nil }
        if text.isEmpty { text = [base..<(base &+ size)] }
        return Image(id: id, path: path, base: base, size: size, text: text,
                     isApp: mach.filetype == UInt32(MH_EXECUTE), omitsFramePointers: false)
    }

    /// A Mach-O name field (16 bytes, NUL-padded; all 16 used when the name is that long) as
    /// text.
    private static func fixedName<Field>(_ field: Field) -> String {
        withUnsafeBytes(of: field) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    /// `path` without a leading `/private`: iOS reaches `/var` through a symbolic link to
    /// `/private/var`, and dyld and `Bundle` need not spell a path the same way.
    private static func withoutPrivate(_ path: String) -> Substring {
        path.hasPrefix("/private/") ? path.dropFirst("/private".count) : path[...]
    }
}
#endif
