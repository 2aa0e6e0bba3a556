import Foundation
import FramescopeSymbols

/// The real object files of `../shared/binaries` (see its SOURCES.md), read from the
/// source tree as the trace tests read `../shared/corpus`.
enum Binaries {
    static var folder: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("shared/binaries")
    }

    static let trash = "trash/macos-trash"
    static let getWindows = "get-windows/main"
    static let testProgram = "swift-dwarf/TestProgram.dSYM/Contents/Resources/DWARF/TestProgram"
    static let macCrash = "symbolic/macos/crash"
    static let macCrashDSYM = "symbolic/macos/crash.dSYM/Contents/Resources/DWARF/crash"
    static let example = "symbolic/macos/Example.framework.dSYM/Contents/Resources/DWARF/Example"
    static let crashProbe = "symbolic/crashprobe-ios-1.4.1/dSYMs/54039061-A983-3323-A49D-837A894D667F.dSYM/Contents/Resources/DWARF/CrashProbeiOS"
    static let crashLib = "symbolic/crashprobe-ios-1.4.1/dSYMs/3CD3E3CC-281E-3AF3-84EB-CDE6D56F0559.dSYM/Contents/Resources/DWARF/CrashLibiOS"
    static let sentrySwift = "symbolic/crashprobe-ios-1.4.1/dSYMs/0285884D-3DE9-3051-B23A-63B48BF99F35.dSYM/Contents/Resources/DWARF/SentrySwift"
    static let linuxCrash = "symbolic/linux/crash"
    static let linuxCrashDebug = "symbolic/linux/crash.debug"
    static let dynAarch64 = "datadog-ci/dyn_aarch64"
    static let dynAarch64Debug = "datadog-ci/dyn_aarch64.debug"
    static let demoApp = "sentry-cli/DemoApp"

    /// Every object file of the folder.
    static let all = [trash, getWindows, testProgram, macCrash, macCrashDSYM, example, crashProbe, crashLib, sentrySwift,
                      linuxCrash, linuxCrashDebug, dynAarch64, dynAarch64Debug, demoApp]

    /// The bytes of `path` (relative to the folder).
    static func bytes(_ path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: folder.appendingPathComponent(path)))
    }

    /// The images of `path`.
    static func images(_ path: String) throws -> [SymbolImage] {
        try ObjectFile.images(in: bytes(path))
    }

    /// The image of `path` for `arch` (one slice of a fat file).
    static func image(_ path: String, arch: String) throws -> SymbolImage? {
        try images(path).first { $0.arch == arch }
    }
}
