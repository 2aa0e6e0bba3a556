import FramescopeSymbols
import Testing

/// ``ObjectFile/checkHead(_:fileSize:)``: a file's head checked as the whole parse checks it,
/// every range measured against the file's size (issue 43, item 9: a 3 GiB file was read whole,
/// twice, before a header error in its first 40 bytes was found).
@Suite("Object file heads")
struct ObjectFileHeadTests {
    @Test("Every real file's first 4 KiB pass; the check refuses nothing the whole parse accepts", arguments: Binaries.all)
    func realHeadsPass(path: String) throws {
        let bytes = try Binaries.bytes(path)
        for length in [64, 4096, 65_536] where length < bytes.count {
            try ObjectFile.checkHead(Array(bytes.prefix(length)), fileSize: bytes.count)
        }
    }

    @Test("A head refused is refused with the whole parse's error, for every cut of a real file", arguments: [Binaries.trash, Binaries.linuxCrash])
    func agreesWithWholeParse(path: String) throws {
        let bytes = try Binaries.bytes(path)
        // Files cut short: the whole parse of the cut file and the head check of its first
        // 4 KiB (with the cut's size) refuse alike whenever the head check refuses.
        for cut in stride(from: 8, to: min(bytes.count, 200_000), by: 997) {
            let file = Array(bytes.prefix(cut))
            var headError: ObjectFileError?
            do { try ObjectFile.checkHead(Array(file.prefix(4096)), fileSize: cut) } catch { headError = error }
            guard let headError else { continue }
            #expect(throws: headError) { _ = try ObjectFile(file) }
        }
    }

    @Test("An ELF header whose e_shoff lies past a 3 GiB file is refused from its first 64 bytes")
    func hugeFileBadHeader() {
        var header = [UInt8](repeating: 0, count: 64)
        header.replaceSubrange(0..<8, with: [0x7F, 0x45, 0x4C, 0x46, 2, 1, 1, 0])
        header[16] = 2; header[18] = 62; header[20] = 1
        for index in 0..<8 { header[40 + index] = UInt8(truncatingIfNeeded: (UInt64(1) << 40) >> (8 * UInt64(index))) }
        header[58] = 64; header[60] = 1
        #expect(throws: ObjectFileError.self) { try ObjectFile.checkHead(header, fileSize: 3 << 30) }
        do { try ObjectFile.checkHead(header, fileSize: 3 << 30) } catch {
            #expect(error.field == "e_shoff" && error.code == .outOfBounds)
        }
        // The same header with e_shoff inside the file passes: the section headers lie past the head.
        header[45] = 0; header[41] = 0x10
        #expect(throws: Never.self) { try ObjectFile.checkHead(header, fileSize: 3 << 30) }
    }

    @Test("Bad magic and 32-bit files are refused from 4 bytes, as the whole parse refuses them")
    func magic() {
        for head: [UInt8] in [[0x00, 0x01, 0x02, 0x03], [0xCE, 0xFA, 0xED, 0xFE], [0x7F, 0x45, 0x4C, 0x46, 1, 1]] {
            var whole: ObjectFileError?
            do { _ = try ObjectFile(head + [UInt8](repeating: 0, count: 60)) } catch { whole = error }
            #expect(throws: whole ?? ObjectFileError(.malformed, field: "-", offset: 0, "")) {
                try ObjectFile.checkHead(head, fileSize: 1 << 30)
            }
        }
    }
}
