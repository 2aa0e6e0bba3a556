import Foundation
@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeSQLite
@testable import FramescopeStore
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
        #expect(crash.name(at: 0x401ec0) == "(anonymous namespace)::callback(google_breakpad::MinidumpDescriptor const&, void*, bool)",
                "C++ demangled by c++filt")
        #expect(crash.name(at: 0x4085e0)
                    == "google_breakpad::(anonymous namespace)::ElfFileSoName(google_breakpad::LinuxDumper const&, google_breakpad::MappingInfo const&, char*, unsigned long) [clone .constprop.55]")
        // _init (st_size 0) ends with .init (0x401558 + 0x1a): .plt (0x401580) names nothing.
        #expect(crash.name(at: 0x401571) == "_init" && crash.name(at: 0x401572) == nil && crash.name(at: 0x401580) == nil)
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

    #if os(Linux)
    /// `Fixtures/symbols/clones.cpp` compiled with `g++ -O2` into `folder`; its path and the
    /// defined functions `nm` lists (name and address).
    static func compiledClones(in folder: TemporaryDirectory) throws -> (path: String, functions: [(name: String, address: UInt64)]) {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/symbols/clones.cpp").path
        let path = folder.url.appendingPathComponent("clones").path
        let compiled = try Self.run(try Self.tool("g++", package: "g++"), ["-O2", "-o", path, source])
        try #require(compiled.status == 0, "g++ -O2 failed: \(compiled.output)")
        let nm = try Self.run(try Self.tool("nm", package: "binutils"), ["--defined-only", path])
        let functions = nm.output.split(separator: "\n").compactMap { line -> (name: String, address: UInt64)? in
            let columns = line.split(separator: " ")
            guard columns.count == 3, "tT".contains(columns[1]), let address = UInt64(columns[0], radix: 16) else { return nil }
            return (String(columns[2]), address)
        }
        return (path, functions)
    }

    /// The executable `name` on `PATH`; a test failure naming `package` when there is none.
    static func tool(_ name: String, package: String) throws -> String {
        let folders = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":")
        let found = folders.map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
        return try #require(found, "\(name) is not on PATH: install \(package)")
    }

    /// Runs `tool` with `arguments`; its exit status and its output and error together.
    static func run(_ tool: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }

    @Test("A program compiled here: C++ names demangled by c++filt, clones named as their function with a note, _init bounded by .init")
    func compiledCxx() async throws {
        let scratch = try TemporaryDirectory()
        let program = try Self.compiledClones(in: scratch)
        func address(_ prefix: String) throws -> UInt64 {
            try #require(program.functions.first { $0.name.hasPrefix(prefix) }, "nm lists no \(prefix)").address
        }
        let constprop = try #require(program.functions.first { $0.name.hasPrefix("_ZN4shopL6scaledEii.constprop.") })
        let (result, store, folder) = try await Self.upload([program.path])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(!result.stdout.contains("stayed mangled"), "\(result.stdout)")
        let image = try #require(try await store.symbolImages(app: "shop").first)
        #expect(result.stdout.contains("clones (\(image.arch), \(image.id)): \(image.symbols) symbols\n"), "\(result.stdout)")
        let table = try #require(try await store.symbolTables(app: "shop", ids: [image.id])[image.id])
        #expect(table.name(at: try address("_ZN4shop6decodeEPKci")) == "shop::decode(char const*, int)")
        #expect(table.name(at: try address("_ZN4shop6decodeEPKci.cold")) == "shop::decode(char const*, int) [clone .cold]")
        #expect(table.name(at: constprop.address) == "shop::scaled(int, int) [clone \(constprop.name.dropFirst("_ZN4shopL6scaledEii".count))]")
        #expect(table.name(at: try address("shop_entry")) == "shop_entry", "C names as they are")
        #expect(table.name(at: try address("_init")) == "_init")
        // .plt follows .init (readelf -S): none of it is _init's.
        #expect(table.name(at: try address("_init") + 0x20) == nil)
        #expect(CloneNote.function(of: try #require(table.name(at: try address("_ZN4shop6decodeEPKci.cold")))) == "shop::decode(char const*, int)")
        _ = folder
    }

    @Test("Without c++filt or llvm-cxxfilt, the output says how many C++ names stayed mangled and why; clones still get their notes")
    func withoutCxxfilt() async throws {
        let scratch = try TemporaryDirectory()
        let program = try Self.compiledClones(in: scratch)
        let cxx = program.functions.filter { $0.name.hasPrefix("_Z") }
        #expect(cxx.count == 4, "decode, decode.cold, report, scaled.constprop: \(cxx.map(\.name))")
        // A PATH with neither tool (nor swift-demangle: Swift's names fall back to the runtime).
        let emptyPath = try TemporaryDirectory()
        let (result, store, folder) = try await Self.upload([program.path], environment: ["PATH": emptyPath.url.path])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(result.stdout.contains("; \(cxx.count) C++ names stayed mangled: no c++filt or llvm-cxxfilt on PATH\n"), "\(result.stdout)")
        let image = try #require(try await store.symbolImages(app: "shop").first)
        let table = try #require(try await store.symbolTables(app: "shop", ids: [image.id])[image.id])
        let cold = try #require(cxx.first { $0.name.hasSuffix(".cold") })
        #expect(table.name(at: cold.address) == "_ZN4shop6decodeEPKci [clone .cold]")

        let (named, _, namedFolder) = try await Self.upload([program.path], environment: ["FRAMESCOPE_CXXFILT": "/nonexistent/c++filt"])
        #expect(named.stdout.contains("; \(cxx.count) C++ names stayed mangled: FRAMESCOPE_CXXFILT is /nonexistent/c++filt, not an executable file\n"),
                "\(named.stdout)")
        _ = (folder, namedFolder)
    }
    #endif

    @Test("Truncated, foreign and missing files are refused with a message naming the file; nothing is stored")
    func hostileFiles() async throws {
        let folder = try TemporaryDirectory()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: Self.path("trash/macos-trash")))
        let truncated = folder.url.appendingPathComponent("truncated").path
        try bytes.prefix(120_000).write(to: URL(fileURLWithPath: truncated))
        let text = try folder.file("notes.txt", "not an object file")
        // A folder, and a .dSYM bundle without DWARF, are input the command cannot use: 65, not 74.
        let emptyBundle = folder.url.appendingPathComponent("Shop.app.dSYM/Contents/Resources/DWARF")
        try FileManager.default.createDirectory(at: emptyBundle, withIntermediateDirectories: true)
        let dsym = folder.url.appendingPathComponent("Shop.app.dSYM").path
        for (file, code) in [(truncated, Int32(65)), (text, 65), (folder.url.appendingPathComponent("absent").path, 74), (folder.url.path, 65), (dsym, 65)] {
            let (result, store, scratch) = try await Self.upload([file])
            #expect(result.exitCode == code, "\(file): \(result.stderr)")
            #expect(result.stderr.contains(file), "\(result.stderr)")
            #expect(!result.stderr.contains("Fatal error"))
            #expect(try await store.symbolImages(app: "shop").isEmpty)
            _ = scratch
        }
    }

    @Test("A .dSYM bundle without DWARF says so and exits 65")
    func dsymWithoutDWARF() async throws {
        let folder = try TemporaryDirectory()
        let bundle = folder.url.appendingPathComponent("Shop.app.dSYM")
        try FileManager.default.createDirectory(at: bundle.appendingPathComponent("Contents/Resources"), withIntermediateDirectories: true)
        let (result, store, scratch) = try await Self.upload([bundle.path])
        #expect(result.exitCode == 65, "\(result.stderr)")
        #expect(result.stderr.contains("\(bundle.path): a .dSYM bundle without DWARF"), "\(result.stderr)")
        #expect(try await store.symbolImages(app: "shop").isEmpty)
        _ = (scratch, folder)
    }

    @Test("--db for an app that does not exist exits 65 naming it, and stores nothing")
    func unknownApp() async throws {
        let folder = try TemporaryDirectory()
        let db = folder.url.appendingPathComponent("symbols.sqlite").path
        let store = try SQLiteStore(path: db)
        _ = try await store.createApp(name: "Shop", id: nil)
        let result = try CLI.run(["symbols", "upload", "--app", "nosuch", "--db", db, Self.path("trash/macos-trash")])
        #expect(result.exitCode == 65, "\(result.stderr)")
        #expect(result.stderr.contains("no app 'nosuch' in \(db)"), "\(result.stderr)")
        #expect(try await store.symbolImages(app: "nosuch").isEmpty)
        #expect(try await store.symbolImages(app: "shop").isEmpty)
    }

    @Test("An image whose LC_UUID is all zeros is skipped with a message; the others are stored")
    func zeroUUID() async throws {
        let folder = try TemporaryDirectory()
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Self.path("sentry-cli/DemoApp"))))
        let uuid: [UInt8] = [0x12, 0x23, 0xa2, 0x8e, 0x82, 0x3d, 0x3a, 0x97, 0xbd, 0xe7, 0x9f, 0xa2, 0x6b, 0x79, 0x99, 0xa2]
        let at = try #require((0...(bytes.count - 16)).first { bytes[$0..<($0 + 16)].elementsEqual(uuid) }, "DemoApp's LC_UUID")
        bytes.replaceSubrange(at..<(at + 16), with: [UInt8](repeating: 0, count: 16))
        let zeroed = try folder.file("ZeroApp", bytes: bytes)
        let (result, store, scratch) = try await Self.upload([zeroed, Self.path("trash/macos-trash")])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(result.stderr.contains("\(zeroed) (arm64): image id 00000000000000000000000000000000 is all zeros"), "\(result.stderr)")
        let ids = Set(try await store.symbolImages(app: "shop").map(\.id))
        #expect(ids.contains("73d406b3246a378bbefc16429a4d8133") && !ids.contains(String(repeating: "0", count: 32)))
        _ = (scratch, folder)
    }

    @Test("A large file whose header is wrong is refused from its first bytes, not read whole")
    func largeFileBadHeader() async throws {
        let folder = try TemporaryDirectory()
        // An ELF header whose e_shoff (byte 40) points 1 TiB in, at the head of a 512 MiB sparse file.
        var header = [UInt8](repeating: 0, count: 64)
        header.replaceSubrange(0..<8, with: [0x7F, 0x45, 0x4C, 0x46, 2, 1, 1, 0])
        header[16] = 2; header[18] = 62; header[20] = 1
        for index in 0..<8 { header[40 + index] = UInt8(truncatingIfNeeded: (UInt64(1) << 40) >> (8 * UInt64(index))) }
        header[58] = 64; header[60] = 1
        let path = try folder.file("huge.so", bytes: header)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: 512 << 20)
        try handle.close()
        // GNU time gives the child's peak resident set; without it only the refusal is checked.
        let time = "/usr/bin/time"
        let measured = FileManager.default.isExecutableFile(atPath: time)
        let db = folder.url.appendingPathComponent("symbols.sqlite").path
        _ = try await SQLiteStore(path: db).createApp(name: "Shop", id: nil)
        let arguments = ["symbols", "upload", "--app", "shop", "--db", db, path]
        let result = measured
            ? try CLI.runProduct(URL(fileURLWithPath: time), ["-f", "peak-kib %M", CLI.binary.path] + arguments)
            : try CLI.run(arguments)
        #expect(result.exitCode == 65, "\(result.stderr)")
        #expect(result.stderr.contains("\(path): e_shoff 1099511627776 puts the section headers past the end of the 536870912-byte file"), "\(result.stderr)")
        if measured, let line = result.stderr.split(separator: "\n").last(where: { $0.hasPrefix("peak-kib ") }),
           let kib = Int(line.dropFirst("peak-kib ".count)) {
            #expect(kib < 200 * 1024, "the 512 MiB file took \(kib) KiB to refuse")
        }
    }
}
