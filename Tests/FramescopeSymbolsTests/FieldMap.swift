/// The header fields of a real object file that size or place its tables, found by walking
/// its headers, for tests that set them to hostile values.
///
/// Only ever run on the unmodified files of `../shared/binaries`; every read is checked
/// all the same, and a field that cannot be read is left out.
struct Field: CustomStringConvertible {
    /// The field's name and which instance (`nsyms of slice 1`).
    var name: String
    /// Where it is in the file, in bytes.
    var offset: Int
    /// Its width in bytes: 1, 2, 4 or 8.
    var width: Int
    /// Whether it is stored big-endian (a fat header).
    var bigEndian = false
    /// A value that makes what the field sizes or places reach just past the end of its
    /// slice or file (or of its table).
    var pastEnd: UInt64

    var description: String { "\(name) @\(offset)" }

    /// The largest value the field holds.
    var maximum: UInt64 { width == 8 ? .max : (1 << UInt64(width * 8)) - 1 }

    /// `bytes` with the field set to `value` (truncated to its width).
    func set(_ value: UInt64, in bytes: [UInt8]) -> [UInt8] {
        var copy = bytes
        for position in 0..<width where offset + position < copy.count {
            let shift = UInt64(bigEndian ? width - 1 - position : position) * 8
            copy[offset + position] = UInt8(truncatingIfNeeded: value >> shift)
        }
        return copy
    }
}

enum FieldMap {
    /// The unsigned integer of `width` bytes at `offset`, or nil outside `bytes`.
    static func read(_ bytes: [UInt8], _ offset: Int, _ width: Int, bigEndian: Bool = false) -> UInt64? {
        guard offset >= 0, width <= 8, offset <= bytes.count - width else { return nil }
        var value: UInt64 = 0
        for position in 0..<width {
            value = value << 8 | UInt64(bytes[offset + (bigEndian ? position : width - 1 - position)])
        }
        return value
    }

    /// Saturating `a - b + 1`.
    static func past(_ a: UInt64, _ b: UInt64) -> UInt64 { a >= b ? a - b + 1 : 1 }

    /// The fields of the file in `bytes`.
    static func fields(_ bytes: [UInt8]) -> [Field] {
        switch read(bytes, 0, 4, bigEndian: true) {
        case 0xCAFE_BABE: fat(bytes)
        case 0xCFFA_EDFE: machO(bytes, base: 0, size: bytes.count, label: "")
        case 0x7F45_4C46: elf(bytes)
        default: []
        }
    }

    static func fat(_ bytes: [UInt8]) -> [Field] {
        let count = read(bytes, 4, 4, bigEndian: true) ?? 0
        var fields = [Field(name: "nfat_arch", offset: 4, width: 4, bigEndian: true, pastEnd: 33)]
        for index in 0..<Int(min(count, 32)) {
            let at = 8 + index * 20
            guard let offset = read(bytes, at + 8, 4, bigEndian: true), let size = read(bytes, at + 12, 4, bigEndian: true) else { break }
            let total = UInt64(bytes.count)
            fields.append(Field(name: "offset of fat_arch \(index)", offset: at + 8, width: 4, bigEndian: true, pastEnd: past(total, size)))
            fields.append(Field(name: "size of fat_arch \(index)", offset: at + 12, width: 4, bigEndian: true, pastEnd: past(total, offset)))
            fields.append(Field(name: "cputype of fat_arch \(index)", offset: at, width: 4, bigEndian: true, pastEnd: 0x0100_0000))
            fields += machO(bytes, base: Int(offset), size: Int(size), label: " of slice \(index)")
        }
        return fields
    }

    static func machO(_ bytes: [UInt8], base: Int, size: Int, label: String) -> [Field] {
        guard let ncmds = read(bytes, base + 16, 4), let sizeofcmds = read(bytes, base + 20, 4) else { return [] }
        let window = UInt64(size)
        var fields = [
            Field(name: "ncmds\(label)", offset: base + 16, width: 4, pastEnd: sizeofcmds / 8 + 1),
            Field(name: "sizeofcmds\(label)", offset: base + 20, width: 4, pastEnd: past(window, 32)),
        ]
        var cursor = 32
        for number in 0..<Int(min(ncmds, 4096)) {
            guard let cmd = read(bytes, base + cursor, 4), let cmdsize = read(bytes, base + cursor + 4, 4), cmdsize >= 8 else { break }
            let at = base + cursor
            fields.append(Field(name: "cmdsize of load command \(number)\(label)", offset: at + 4, width: 4,
                                pastEnd: past(32 + sizeofcmds, UInt64(cursor))))
            if cmd == 0x19, let nsects = read(bytes, at + 64, 4) {
                fields.append(Field(name: "nsects of load command \(number)\(label)", offset: at + 64, width: 4, pastEnd: (cmdsize - min(cmdsize, 72)) / 80 + 1))
                for section in 0..<Int(min(nsects, 64)) {
                    let header = at + 72 + section * 80
                    fields.append(Field(name: "addr of section \(section) of command \(number)\(label)", offset: header + 32, width: 8, pastEnd: .max - 1))
                    fields.append(Field(name: "size of section \(section) of command \(number)\(label)", offset: header + 40, width: 8, pastEnd: .max))
                    fields.append(Field(name: "flags of section \(section) of command \(number)\(label)", offset: header + 64, width: 4, pastEnd: 0x8000_0000))
                }
            }
            if cmd == 0x2, let symoff = read(bytes, at + 8, 4), let nsyms = read(bytes, at + 12, 4),
               let stroff = read(bytes, at + 16, 4), let strsize = read(bytes, at + 20, 4) {
                fields += [
                    Field(name: "symoff\(label)", offset: at + 8, width: 4, pastEnd: past(window, nsyms * 16)),
                    Field(name: "nsyms\(label)", offset: at + 12, width: 4, pastEnd: past(window, symoff) / 16 + 1),
                    Field(name: "stroff\(label)", offset: at + 16, width: 4, pastEnd: past(window, strsize)),
                    Field(name: "strsize\(label)", offset: at + 20, width: 4, pastEnd: past(window, stroff)),
                ]
                // A few nlist entries: the first ones and the last.
                let entries = Array(0..<Int(min(nsyms, 6))) + (nsyms > 6 ? [Int(nsyms) - 1] : [])
                for entry in entries {
                    let nlist = base + Int(symoff) + entry * 16
                    fields += [
                        Field(name: "n_strx of symbol \(entry)\(label)", offset: nlist, width: 4, pastEnd: strsize),
                        Field(name: "n_type of symbol \(entry)\(label)", offset: nlist + 4, width: 1, pastEnd: 0x0e),
                        Field(name: "n_sect of symbol \(entry)\(label)", offset: nlist + 5, width: 1, pastEnd: 0xfe),
                        Field(name: "n_value of symbol \(entry)\(label)", offset: nlist + 8, width: 8, pastEnd: .max),
                    ]
                }
            }
            cursor += Int(cmdsize)
        }
        return fields
    }

    static func elf(_ bytes: [UInt8]) -> [Field] {
        guard let phoff = read(bytes, 32, 8), let shoff = read(bytes, 40, 8), let phentsize = read(bytes, 54, 2),
              let phnum = read(bytes, 56, 2), let shentsize = read(bytes, 58, 2), let shnum = read(bytes, 60, 2),
              shentsize >= 64, phentsize >= 56 else { return [] }
        let total = UInt64(bytes.count)
        var fields = [
            Field(name: "e_phoff", offset: 32, width: 8, pastEnd: past(total, phnum * phentsize)),
            Field(name: "e_shoff", offset: 40, width: 8, pastEnd: past(total, shnum * shentsize)),
            Field(name: "e_phentsize", offset: 54, width: 2, pastEnd: past(total, phoff) / max(phnum, 1) + 1),
            Field(name: "e_phnum", offset: 56, width: 2, pastEnd: past(total, phoff) / phentsize + 1),
            Field(name: "e_shentsize", offset: 58, width: 2, pastEnd: past(total, shoff) / max(shnum, 1) + 1),
            Field(name: "e_shnum", offset: 60, width: 2, pastEnd: past(total, shoff) / shentsize + 1),
            Field(name: "e_shstrndx", offset: 62, width: 2, pastEnd: shnum),
        ]
        var symbolTable: (offset: UInt64, size: UInt64, link: UInt64)?
        for index in 0..<Int(shnum) {
            let at = Int(shoff) + index * Int(shentsize)
            guard let type = read(bytes, at + 4, 4), let offset = read(bytes, at + 24, 8), let size = read(bytes, at + 32, 8),
                  let link = read(bytes, at + 40, 4) else { break }
            fields += [
                Field(name: "sh_name of section \(index)", offset: at, width: 4, pastEnd: total),
                Field(name: "sh_type of section \(index)", offset: at + 4, width: 4, pastEnd: 2),
                Field(name: "sh_offset of section \(index)", offset: at + 24, width: 8, pastEnd: past(total, size)),
                Field(name: "sh_size of section \(index)", offset: at + 32, width: 8, pastEnd: past(total, offset)),
                Field(name: "sh_link of section \(index)", offset: at + 40, width: 4, pastEnd: shnum),
                Field(name: "sh_entsize of section \(index)", offset: at + 56, width: 8, pastEnd: total + 1),
            ]
            if type == 7 { fields += notes(bytes, at: Int(offset), size: Int(size), label: "section \(index)") }
            if type == 2 { symbolTable = (offset, size, link) }
        }
        for index in 0..<Int(phnum) {
            let at = Int(phoff) + index * Int(phentsize)
            guard let type = read(bytes, at, 4), let offset = read(bytes, at + 8, 8), let fileSize = read(bytes, at + 32, 8) else { break }
            fields += [
                Field(name: "p_offset of program header \(index)", offset: at + 8, width: 8, pastEnd: past(total, fileSize)),
                Field(name: "p_filesz of program header \(index)", offset: at + 32, width: 8, pastEnd: past(total, offset)),
                Field(name: "p_memsz of program header \(index)", offset: at + 40, width: 8, pastEnd: .max),
                Field(name: "p_vaddr of program header \(index)", offset: at + 16, width: 8, pastEnd: .max),
            ]
            if type == 4 { fields += notes(bytes, at: Int(offset), size: Int(fileSize), label: "program header \(index)") }
        }
        if let symbolTable {
            let entries = Array(0..<Int(min(symbolTable.size / 24, 8))) + [Int(symbolTable.size / 24) - 1]
            for entry in entries where entry >= 0 {
                let at = Int(symbolTable.offset) + entry * 24
                fields += [
                    Field(name: "st_name of symbol \(entry)", offset: at, width: 4, pastEnd: total),
                    Field(name: "st_info of symbol \(entry)", offset: at + 4, width: 1, pastEnd: 0x12),
                    Field(name: "st_shndx of symbol \(entry)", offset: at + 6, width: 2, pastEnd: 0xffff),
                    Field(name: "st_value of symbol \(entry)", offset: at + 8, width: 8, pastEnd: .max),
                    Field(name: "st_size of symbol \(entry)", offset: at + 16, width: 8, pastEnd: .max),
                ]
            }
        }
        return fields
    }

    /// `namesz` and `descsz` of each note in `size` bytes at `at`.
    static func notes(_ bytes: [UInt8], at: Int, size: Int, label: String) -> [Field] {
        var fields: [Field] = []
        var cursor = 0
        while cursor + 12 <= size, let nameSize = read(bytes, at + cursor, 4), let descSize = read(bytes, at + cursor + 4, 4) {
            fields.append(Field(name: "namesz of a note in \(label)", offset: at + cursor, width: 4, pastEnd: UInt64(size - cursor - 12 + 1)))
            fields.append(Field(name: "descsz of a note in \(label)", offset: at + cursor + 4, width: 4, pastEnd: UInt64(size - cursor - 12 + 1)))
            cursor += 12 + Int((nameSize + 3) & ~3) + Int((descSize + 3) & ~3)
        }
        return fields
    }
}
