extension ELFFile {
    /// The `NT_GNU_BUILD_ID` (type 3, owner `GNU`) note's bytes: from the first `SHT_NOTE`
    /// section that has one, else from a `PT_NOTE` segment (a file whose section headers
    /// were stripped); nil when neither has one.
    static func buildID(_ reader: ByteReader, sections: [Section], segments: [Segment]) throws(ObjectFileError) -> [UInt8]? {
        for (index, section) in sections.enumerated() where section.type == 7 {
            let notes = try contents(reader, of: sections, index: index, field: "a note section")
            if let id = try buildID(in: notes, alignment: section.alignment, place: "note section \(index)") { return id }
        }
        for (index, segment) in segments.enumerated() where segment.type == 4 {
            let notes = try reader.window(at: segment.offset, length: segment.fileSize, field: "p_offset and p_filesz of program header \(index), a PT_NOTE")
            if let id = try buildID(in: notes, alignment: segment.alignment, place: "PT_NOTE program header \(index)") { return id }
        }
        return nil
    }

    /// The build id among the notes of `notes`: each a header of `namesz`, `descsz` and
    /// `type` (4 bytes each) and the name, padded to `alignment` from the note's start (8
    /// when the section or segment says 8, as for `.note.gnu.property`, otherwise 4), then
    /// the descriptor, padded the same way; binutils' `ELF_NOTE_DESC_OFFSET` and
    /// `ELF_NOTE_NEXT_OFFSET`.
    /// - Throws: ``ObjectFileError`` (`outOfBounds`) for a note that overruns its section.
    static func buildID(in notes: ByteReader, alignment: UInt64, place: String) throws(ObjectFileError) -> [UInt8]? {
        let align: UInt64 = alignment == 8 ? 8 : 4
        func padded(_ length: UInt64) -> UInt64 { (length + align - 1) & ~(align - 1) } // length < 2^34: no overflow
        var cursor: UInt64 = 0
        let end = UInt64(notes.count)
        while end - cursor >= 12 {
            let nameSize = UInt64(try notes.uint32(at: cursor, field: "namesz of a note in \(place)"))
            let descSize = UInt64(try notes.uint32(at: cursor + 4, field: "descsz of a note in \(place)"))
            let type = try notes.uint32(at: cursor + 8, field: "n_type of a note in \(place)")
            let descAt = cursor + padded(12 + nameSize)
            guard descAt <= end, descSize <= end - descAt else {
                throw notes.error(.outOfBounds, "namesz and descsz of a note in \(place)", at: cursor,
                                  "a note's name (\(nameSize) bytes) and descriptor (\(descSize) bytes) reach past the end of \(place) (\(end) bytes)")
            }
            if type == 3, nameSize == 4, descSize > 0,
               try notes.bytes(at: cursor + 12, length: 4, field: "the name of a note in \(place)").elementsEqual([0x47, 0x4e, 0x55, 0]) {
                return Array(try notes.bytes(at: descAt, length: descSize, field: "the build id in \(place)"))
            }
            cursor = min(end, descAt + padded(descSize))
        }
        return nil
    }

    /// The file name at the start of the `.gnu_debuglink` section (a CRC-32 of the debug
    /// file follows it); nil when there is no such section.
    static func debugLink(_ reader: ByteReader, sections: [Section]) throws(ObjectFileError) -> String? {
        guard let index = sections.firstIndex(where: { $0.name == ".gnu_debuglink" }) else { return nil }
        let link = try contents(reader, of: sections, index: index, field: ".gnu_debuglink")
        return try link.cString(at: 0, field: "the file name in .gnu_debuglink")
    }
}
