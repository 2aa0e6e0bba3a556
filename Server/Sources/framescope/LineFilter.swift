import Foundation

/// A demangler run as a line filter, for `framescope symbols upload`: every name written to
/// one process's standard input, one a line, and its readable form read back, one a line.
/// `swift-demangle`, `c++filt` and `llvm-cxxfilt` all work this way.
enum LineFilter {
    /// Why a filter gave no answer, for the upload's output.
    enum Failure: Error, Equatable, CustomStringConvertible {
        /// The process could not be started (the message is the system's).
        case notStarted(String)
        /// It exited with a status other than 0.
        case exited(Int32)
        /// It answered a different number of lines than it was given names.
        case lineCount(answered: Int, given: Int)

        var description: String {
            switch self {
            case let .notStarted(message): "it could not be started (\(message))"
            case let .exited(status): "it exited with status \(status)"
            case let .lineCount(answered, given): "it answered \(answered) lines for \(given) names"
            }
        }
    }

    /// `names` through `tool` run with `arguments`: one answer per name, in order.
    static func run(_ tool: String, arguments: [String], _ names: [String]) -> Result<[String], Failure> {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return .failure(.notStarted(error.localizedDescription)) }
        // Written from a thread of its own, so that a full output pipe never stops the input.
        let text = Data((names.joined(separator: "\n") + "\n").utf8)
        let writer = Thread {
            try? input.fileHandleForWriting.write(contentsOf: text)
            try? input.fileHandleForWriting.close()
        }
        writer.start()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return .failure(.exited(process.terminationStatus)) }
        var lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        guard lines.count == names.count else { return .failure(.lineCount(answered: lines.count, given: names.count)) }
        return .success(lines)
    }

    /// The first of `names` that is an executable file in a folder of `PATH`, or `nil`.
    static func onPath(_ names: [String]) -> String? {
        let folders = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        for name in names {
            for folder in folders {
                let candidate = (folder as NSString).appendingPathComponent(name)
                if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            }
        }
        return nil
    }
}
