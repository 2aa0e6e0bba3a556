extension MachOFile {
    /// The architecture's name for `cputype` and `cpusubtype`: `arm64`, `arm64e`, `x86_64`,
    /// `x86_64h`, or `cputype 0x…` when unknown.
    public static func archName(cpuType: UInt32, subtype: UInt32) -> String {
        let variant = subtype & 0x00ff_ffff // the high byte holds capability bits (pointer authentication's ABI version)
        switch cpuType {
        case 0x0100_000c: return variant == 2 ? "arm64e" : "arm64"
        case 0x0100_0007: return variant == 8 ? "x86_64h" : "x86_64"
        case 0x0200_000c: return "arm64_32"
        default: return "cputype 0x\(String(cpuType, radix: 16))"
        }
    }

    /// `filetype`'s constant name: `MH_EXECUTE`, `MH_DYLIB`, `MH_DSYM`, …, or `MH_0x…` when
    /// unknown.
    public static func fileTypeName(_ fileType: UInt32) -> String {
        switch fileType {
        case 0x1: "MH_OBJECT"
        case 0x2: "MH_EXECUTE"
        case 0x3: "MH_FVMLIB"
        case 0x4: "MH_CORE"
        case 0x5: "MH_PRELOAD"
        case 0x6: "MH_DYLIB"
        case 0x7: "MH_DYLINKER"
        case 0x8: "MH_BUNDLE"
        case 0x9: "MH_DYLIB_STUB"
        case 0xa: "MH_DSYM"
        case 0xb: "MH_KEXT_BUNDLE"
        case 0xc: "MH_FILESET"
        default: "MH_0x\(String(fileType, radix: 16))"
        }
    }

    /// What a `filetype` is for.
    static func kind(_ fileType: UInt32) -> ImageKind {
        switch fileType {
        case 0x1: .relocatable
        case 0x2: .executable
        case 0x6, 0x9: .sharedLibrary
        case 0x8: .bundle
        case 0xa: .debugSymbols
        default: .other(fileType)
        }
    }
}
