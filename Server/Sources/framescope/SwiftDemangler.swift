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
/// `swift`, then (on a Mac) `xcrun --find swift-demangle`. Without it, the Swift runtime's
/// own `swift_demangle` reads `$s`/`$S` names and older ones stay as they are. Names that
/// are not Swift's (C, Objective-C, C++) are never changed.
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

    /// Each of `names` readable: Swift's demangled, the rest as they are.
    func demangle(_ names: [String]) -> [String] {
        let swift = names.indices.filter { Self.isSwift(names[$0]) }
        guard !swift.isEmpty else { return names }
        var out = names
        let readable = tool.flatMap { Self.run($0, swift.map { names[$0] }) } ?? swift.map { Self.runtimeDemangle(names[$0]) ?? names[$0] }
        for (index, name) in zip(swift, readable) where !name.isEmpty { out[index] = name }
        return out
    }

    /// `names` through `tool`, or `nil` when it fails or answers a different number of lines.
    static func run(_ tool: String, _ names: [String]) -> [String]? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = ["--simplified", "--compact"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        // Written from a thread of its own, so that a full output pipe never stops the input.
        let text = Data((names.joined(separator: "\n") + "\n").utf8)
        let writer = Thread {
            try? input.fileHandleForWriting.write(contentsOf: text)
            try? input.fileHandleForWriting.close()
        }
        writer.start()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        var lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        return lines.count == names.count ? lines : nil
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
