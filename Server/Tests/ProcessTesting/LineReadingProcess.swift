import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The built executable `name` of this package: it sits beside the test bundle (on macOS
/// the bundle is a directory, `Contents/MacOS/<binary>`, so the search walks up from it).
public func builtProduct(named name: String) -> URL {
    let testBinary = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
    var directory = testBinary.deletingLastPathComponent()
    while !FileManager.default.fileExists(atPath: directory.appendingPathComponent(name).path), directory.path != "/" {
        directory = directory.deletingLastPathComponent()
    }
    return directory.appendingPathComponent(name)
}

/// Why a child process could not be started.
public struct ChildProcessError: Error, CustomStringConvertible {
    /// What went wrong, for the test's failure message.
    public var description: String
}

/// A child process whose standard output a test reads line by line while it runs
/// (standard input and error are closed).
public final class LineReadingProcess {
    /// The process, for its identifier, exit status and termination reason.
    public let process = Process()
    private let output = Pipe()
    private var buffer: [UInt8] = []

    /// Starts the built executable `product` with `arguments`.
    /// - Throws: ``ChildProcessError`` when it has not been built, or what `Process.run()` throws.
    public init(product: String, arguments: [String]) throws {
        let binary = builtProduct(named: product)
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw ChildProcessError(description: "\(product) not found beside the test bundle; run `swift build --build-tests` first")
        }
        process.executableURL = binary
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    /// The next line of output (waiting for it), or nil once the output has ended; a last
    /// line without a newline is returned too.
    public func nextLine() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            let data = output.fileHandleForReading.availableData
            if data.isEmpty {
                guard !buffer.isEmpty else { return nil }
                defer { buffer = [] }
                return String(decoding: buffer, as: UTF8.self)
            }
            buffer.append(contentsOf: data)
        }
    }

    /// The remaining lines, read until the output ends; returns after the process has exited.
    public func remainingLines() -> [String] {
        var lines: [String] = []
        while let line = nextLine() { lines.append(line) }
        process.waitUntilExit()
        return lines
    }

    /// Sends signal `number` (`SIGSTOP`, `SIGKILL`, …) to the process.
    public func signal(_ number: Int32) {
        kill(process.processIdentifier, number)
    }
}
