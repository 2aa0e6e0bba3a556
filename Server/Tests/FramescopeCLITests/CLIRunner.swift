import Foundation
import FramescopeProcessTesting

/// Runs the built `framescope` binary (it sits beside the test bundle) and captures its output.
struct CLIResult {
    var exitCode: Int32
    var stdout: String
    var stderr: String
}

enum CLI {
    static var binary: URL {
        builtProduct(named: "framescope")
    }

    static func run(_ arguments: [String], environment: [String: String]? = nil) throws -> CLIResult {
        try runProduct(binary, arguments, environment: environment)
    }

    /// Runs the CLI to its end on a thread of its own. `run` blocks its caller until the
    /// command ends; awaited from a task, a long command (a load test) would hold one of the
    /// cooperative pool's threads, which are two on a two-core machine, and with other
    /// suites' blocking calls starve the test's own polling until the command was over.
    static func runOnThread(_ arguments: [String]) async throws -> CLIResult {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try run(arguments) }) }.start()
        }
    }

    /// Runs the built executable at `executable` to its end, capturing its output and its error.
    /// - Parameter environment: Variables set (or, with an empty value, the process's own
    ///   replaced) on top of the test's environment.
    static func runProduct(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil) throws -> CLIResult {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Read before waiting so a large output cannot fill the pipe and stall the child.
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return CLIResult(exitCode: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self))
    }
}

/// A temporary directory, removed when the value is released.
final class TemporaryDirectory {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("framescope-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }

    func file(_ name: String, _ contents: String) throws -> String {
        let path = url.appendingPathComponent(name).path
        try contents.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func file(_ name: String, bytes: [UInt8]) throws -> String {
        let path = url.appendingPathComponent(name).path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }
}

/// A 60 Hz CSV trace: intervals given in refreshes, with optional segment labels per interval.
func csvTrace(_ refreshes: [Int], segments: [String] = []) -> String {
    let r = 1.0 / 60
    var t = 100.0
    var lines = ["timestamp,targetTimestamp,segment", "\(t),\(t + r),"]
    for (index, count) in refreshes.enumerated() {
        t += Double(count) * r
        lines.append("\(t),\(t + r),\(index < segments.count ? segments[index] : "")")
    }
    return lines.joined(separator: "\n") + "\n"
}
