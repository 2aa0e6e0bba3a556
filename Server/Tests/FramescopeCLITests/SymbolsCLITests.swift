import Foundation
@testable import FramescopeCollector
import FramescopeCore
import Testing

/// `framescope symbols upload` on the real object files of `../shared/binaries`
/// (SOURCES.md says what each holds): ids, counts and demangled names as stored.
@Suite("framescope symbols upload")
struct SymbolsCLITests {
    static var binaries: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/binaries")
    }

    static func path(_ relative: String) -> String { binaries.appendingPathComponent(relative).path }

    /// Uploads `files` into a fresh database and returns it with the run's result.
    static func upload(_ files: [String], environment: [String: String]? = nil) async throws -> (CLIResult, SQLiteStore, TemporaryDirectory) {
        let folder = try TemporaryDirectory()
        let db = folder.url.appendingPathComponent("symbols.sqlite").path
        let store = try SQLiteStore(path: db)
        _ = try await store.createApp(name: "Shop", id: nil)
        let result = try CLI.run(["symbols", "upload", "--app", "shop", "--db", db] + files, environment: environment)
        return (result, store, folder)
    }

    @Test("Fat Mach-O, dSYM bundles, ELF and a stripped app: every slice by its id, Swift names demangled (Swift 5 and Swift 3)")
    func realFiles() async throws {
        let (result, store, folder) = try await Self.upload([
            Self.path("trash/macos-trash"), Self.path("swift-dwarf/TestProgram.dSYM"), Self.path("symbolic/linux/crash"),
            Self.path("symbolic/crashprobe-ios-1.4.1/dSYMs/3CD3E3CC-281E-3AF3-84EB-CDE6D56F0559.dSYM"), Self.path("sentry-cli/DemoApp"),
        ])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(result.stdout.contains("macos-trash (arm64, 73d406b3246a378bbefc16429a4d8133): 40 symbols"))
        #expect(result.stdout.contains("macos-trash (x86_64, 6b75a536223a3d189a8abdfe59255a0c)"))
        #expect(result.stdout.contains("DemoApp (arm64, 1223a28e823d3a97bde79fa26b7999a2): 0 symbols (no function symbols"))
        let images = try await store.symbolImages(app: "shop")
        #expect(Set(images.map(\.id)).isSuperset(of: ["73d406b3246a378bbefc16429a4d8133", "09d134c501914af49e197ca87ab0181c",
                                                      "f1c3bcc0279865fe3058404b2831d9e64135386c", "1223a28e823d3a97bde79fa26b7999a2"]))
        let tables = try await store.symbolTables(app: "shop", ids: Set(images.map(\.id)))
        let trash = try #require(tables["73d406b3246a378bbefc16429a4d8133"])
        #expect(trash.name(at: 0x215c) == "specialized trash(paths:)")
        #expect(trash.name(at: 0x25b8) == "NSFileHandle.write(_:)")
        let dwarf = try #require(tables["09d134c501914af49e197ca87ab0181c"])
        #expect(dwarf.name(at: 0xae0) == "greet(name:)")
        #expect(dwarf.name(at: 0xf20) == "inner #1 (value:) in outer()")
        let crash = try #require(tables["f1c3bcc0279865fe3058404b2831d9e64135386c"])
        #expect(crash.name(at: 0x401ec0)?.hasPrefix("_ZN12_GLOBAL__N_18callback") == true, "C++ stays as it is")
        let crashLib = try #require(images.first { $0.name == "CrashLibiOS" })
        let swift3 = try #require(tables[crashLib.id])
        #expect(swift3.name(at: 0x9280) == "@objc CRLCrashSwift.crash()", "Swift 3 (_T) names demangled by the tool")
        #expect(tables["1223a28e823d3a97bde79fa26b7999a2"]?.count == 0)
        _ = folder
    }

    @Test("Without swift-demangle, Swift 5 names are read by the runtime and Swift 3 names stay as they are, with a warning")
    func runtimeFallback() async throws {
        let (result, store, folder) = try await Self.upload(
            [Self.path("trash/macos-trash"), Self.path("symbolic/crashprobe-ios-1.4.1/dSYMs/3CD3E3CC-281E-3AF3-84EB-CDE6D56F0559.dSYM")],
            environment: ["FRAMESCOPE_SWIFT_DEMANGLE": "/nonexistent/swift-demangle"])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(result.stderr.contains("swift-demangle not found"))
        let images = try await store.symbolImages(app: "shop")
        let tables = try await store.symbolTables(app: "shop", ids: Set(images.map(\.id)))
        let trash = try #require(tables["73d406b3246a378bbefc16429a4d8133"]?.name(at: 0x215c))
        #expect(trash.contains("trash(paths:"), "the runtime's fuller form: \(trash)")
        let crashLib = try #require(images.first { $0.name == "CrashLibiOS" })
        #expect(tables[crashLib.id]?.name(at: 0x9280) == "_TToFC11CrashLibiOS13CRLCrashSwift5crashfT_T_")
        _ = folder
    }

    @Test("Truncated, foreign and missing files are refused with a message naming the file; nothing is stored")
    func hostileFiles() async throws {
        let folder = try TemporaryDirectory()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: Self.path("trash/macos-trash")))
        let truncated = folder.url.appendingPathComponent("truncated").path
        try bytes.prefix(120_000).write(to: URL(fileURLWithPath: truncated))
        let text = try folder.file("notes.txt", "not an object file")
        for (file, code) in [(truncated, Int32(65)), (text, 65), (folder.url.appendingPathComponent("absent").path, 74), (folder.url.path, 74)] {
            let (result, store, scratch) = try await Self.upload([file])
            #expect(result.exitCode == code, "\(file): \(result.stderr)")
            #expect(result.stderr.contains(file), "\(result.stderr)")
            #expect(!result.stderr.contains("Fatal error"))
            #expect(try await store.symbolImages(app: "shop").isEmpty)
            _ = scratch
        }
    }
}
