import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Swift symbol names made readable, for `framescope symbols upload`.
///
/// The toolchain's `swift-demangle --simplified --compact` reads every mangling since
/// Swift 3 (`_T…`, `_T0…`, `$S…`, `$s…`): one process over standard input for all names,
/// found as `FRAMESCOPE_SWIFT_DEMANGLE`, then `swift-demangle` on `PATH`, then beside
/// `swift`, then (on a Mac) `xcrun --find swift-demangle`. Without it, or when it fails, the
/// Swift runtime's own `swift_demangle` reads `$s`/`$S` names and older ones stay as they
/// are. Names that are not Swift's (C, Objective-C, C++) are never changed.
struct SwiftDemangler {
    /// The tool's path, or `nil` when there is none.
    let tool: String?

    /// The demangler with the tool found as described, or `tool`.
    init(tool: String? = SwiftDemangler.findTool()) {
        self.tool = tool
    }

    /// Whether `name` is a Swift mangled name (after a Mach-O leading `_` is dropped).
    static func isSwift(_ name: String) -> Bool {
        name.hasPrefix("$s") || name.hasPrefix("$S") || name.hasPrefix("_T") || name.hasPrefix("$e")
    }

    /// Each of `names` readable: Swift's demangled, the rest as they are; and how many Swift
    /// names stayed mangled, by reason.
    func demangle(_ names: [String]) -> (names: [String], stayedMangled: [StayedMangled]) {
        let swift = names.indices.filter { Self.isSwift(names[$0]) }
        guard !swift.isEmpty else { return (names, []) }
        var out = names
        var stayed = StayedMangled.Tally(language: "Swift")
        var toolFailure: String?
        if let tool {
            let name = (tool as NSString).lastPathComponent
            switch LineFilter.run(tool, arguments: ["--simplified", "--compact"], swift.map { names[$0] }) {
            case let .success(readable):
                for (index, text) in zip(swift, readable) {
                    if text.isEmpty || text == names[index] { stayed.add("\(name) could not read them") } else { out[index] = text }
                }
                return (out, stayed.counts)
            case let .failure(failure):
                toolFailure = "\(name) failed: \(failure)"
            }
        }
        let why = toolFailure ?? "no swift-demangle (FRAMESCOPE_SWIFT_DEMANGLE, PATH or beside swift)"
        for index in swift {
            if let text = Self.runtimeDemangle(names[index]), !text.isEmpty {
                out[index] = text
            } else if names[index].hasPrefix("$s") || names[index].hasPrefix("$S") {
                stayed.add("\(why), and the Swift runtime could not read them")
            } else {
                stayed.add("\(why), and the Swift runtime reads only Swift 5 names ($s, $S)")
            }
        }
        return (out, stayed.counts)
    }

    /// The runtime's demangling of a `$s`/`$S` name, or `nil`.
    static func runtimeDemangle(_ name: String) -> String? {
        guard name.hasPrefix("$s") || name.hasPrefix("$S") else { return nil }
        return name.withCString { pointer -> String? in
            guard let result = _swift_demangle(pointer, strlen(pointer), nil, nil, 0) else { return nil }
            defer { free(result) }
            return String(cString: result)
        }
    }

    /// Where `swift-demangle` is, or `nil`.
    static func findTool() -> String? {
        let environment = ProcessInfo.processInfo.environment
        if let path = environment["FRAMESCOPE_SWIFT_DEMANGLE"] { return FileManager.default.isExecutableFile(atPath: path) ? path : nil }
        for folder in (environment["PATH"] ?? "").split(separator: ":").map(String.init) {
            for name in ["swift-demangle", "swift"] {
                let candidate = (folder as NSString).appendingPathComponent(name)
                guard FileManager.default.isExecutableFile(atPath: candidate) else { continue }
                let tool = name == "swift-demangle" ? candidate
                    : ((URL(fileURLWithPath: candidate).resolvingSymlinksInPath().deletingLastPathComponent().path) as NSString).appendingPathComponent("swift-demangle")
                if FileManager.default.isExecutableFile(atPath: tool) { return tool }
            }
        }
        #if os(macOS)
        let xcrun = Process()
        xcrun.executableURL = URL(fileURLWithPath: "/usr/bin/xcrun")
        xcrun.arguments = ["--find", "swift-demangle"]
        let output = Pipe()
        xcrun.standardOutput = output
        xcrun.standardError = FileHandle.nullDevice
        if (try? xcrun.run()) != nil {
            let path = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            xcrun.waitUntilExit()
            if xcrun.terminationStatus == 0, FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        #endif
        return nil
    }
}

/// The Swift runtime's demangler (exported by the standard library on every platform).
@_silgen_name("swift_demangle")
private func _swift_demangle(_ mangledName: UnsafePointer<CChar>?, _ mangledNameLength: Int, _ outputBuffer: UnsafeMutablePointer<CChar>?,
                             _ outputBufferSize: UnsafeMutablePointer<Int>?, _ flags: UInt32) -> UnsafeMutablePointer<CChar>?
