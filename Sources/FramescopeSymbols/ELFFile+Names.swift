extension ELFFile {
    /// The architecture's name for `e_machine`: `x86_64`, `aarch64`, `riscv64`, …, or
    /// `e_machine N` when unknown. (ELF says `aarch64` where Mach-O says `arm64`.)
    public static func machineName(_ machine: UInt16) -> String {
        switch machine {
        case 62: "x86_64"
        case 183: "aarch64"
        case 243: "riscv64"
        case 21: "ppc64"
        case 22: "s390x"
        case 258: "loongarch64"
        default: "e_machine \(machine)"
        }
    }

    /// `e_type`'s constant name: `ET_REL`, `ET_EXEC`, `ET_DYN`, `ET_CORE`, or `ET_0x…` when
    /// unknown.
    public static func fileTypeName(_ fileType: UInt16) -> String {
        switch fileType {
        case 1: "ET_REL"
        case 2: "ET_EXEC"
        case 3: "ET_DYN"
        case 4: "ET_CORE"
        default: "ET_0x\(String(fileType, radix: 16))"
        }
    }

    /// What an `e_type` is for (a position-independent executable is `ET_DYN`, so it is a
    /// ``ImageKind/sharedLibrary`` here).
    static func kind(_ fileType: UInt16) -> ImageKind {
        switch fileType {
        case 1: .relocatable
        case 2: .executable
        case 3: .sharedLibrary
        default: .other(UInt32(fileType))
        }
    }
}
