import Foundation
import NIOCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where `framescope export` writes: whole lines only (a partial line waits for the rest,
/// and is dropped when the connection breaks, so a resumed export never repeats or cuts a
/// line), the cursor of the last line written, and a progress line on a terminal.
final class ExportSink {
    private let file: UnsafeMutablePointer<FILE>
    private let ownsFile: Bool
    private let name: String
    private var partial: [UInt8] = []
    private var pending: [UInt8] = []
    private var lastLine: [UInt8] = []
    /// Lines written so far.
    private(set) var lines = 0
    /// Bytes written so far.
    private(set) var bytes = 0
    private let showsProgress: Bool
    private let started = ContinuousClock.now
    private var lastProgress = ContinuousClock.now

    /// A sink writing to `path`, or to standard output without one.
    /// - Throws: ``CLIFailure`` (74) when the file cannot be created.
    init(path: String?) throws {
        if let path, path != "-" {
            guard let opened = fopen(path, "w") else {
                throw CLIFailure(exitCode: CLIFailure.ioError, message: "\(path): cannot create the file: \(String(cString: strerror(errno)))")
            }
            file = opened
            ownsFile = true
            name = path
        } else {
            // A stream of its own on a copy of descriptor 1 (the C library's `stdout` is
            // shared mutable state to Swift 6).
            guard let opened = fdopen(dup(STDOUT_FILENO), "w") else {
                throw CLIFailure(exitCode: CLIFailure.ioError, message: "stdout: cannot write: \(String(cString: strerror(errno)))")
            }
            file = opened
            ownsFile = true
            name = "stdout"
        }
        showsProgress = isTerminal(STDERR_FILENO)
    }

    deinit {
        if ownsFile { fclose(file) }
    }

    /// Whether bytes after the last line feed are waiting.
    var hasPartialLine: Bool { !partial.isEmpty }

    /// Takes a chunk of the response: every whole line for which `keep` answers true is
    /// queued for writing; the rest of the chunk waits for the next one.
    func write(_ chunk: ByteBuffer, keep: ([UInt8]) -> Bool) {
        chunk.withUnsafeReadableBytes { bytes in
            var start = 0
            for index in 0..<bytes.count where bytes[index] == 0x0A {
                var line = partial
                line.append(contentsOf: bytes[start...index])
                partial.removeAll(keepingCapacity: true)
                start = index + 1
                if keep(line) {
                    pending.append(contentsOf: line)
                    lastLine = line
                    lines += 1
                }
            }
            partial.append(contentsOf: bytes[start..<bytes.count])
        }
        progress()
    }

    /// The output's reader closed its end of the pipe: nothing more can be written.
    struct ReaderClosed: Error {}

    /// Forgets a line cut short by a broken connection.
    func dropPartialLine() {
        partial.removeAll()
    }

    /// Writes what is queued.
    /// - Throws: ``CLIFailure`` (74) when the output cannot be written (a full disk, a closed pipe).
    func flush() throws {
        guard !pending.isEmpty else { return }
        let written = pending.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        guard written == pending.count, fflush(file) == 0 else {
            // The reader went away (`framescope export … | head`): stop quietly, as `cat` does.
            if errno == EPIPE { throw ExportSink.ReaderClosed() }
            throw CLIFailure(exitCode: CLIFailure.ioError, message: "\(name): cannot write the export: \(String(cString: strerror(errno)))")
        }
        bytes += pending.count
        pending.removeAll(keepingCapacity: true)
    }

    /// The cursor of the last line queued: an NDJSON line's `"cursor"` (its first member),
    /// or a CSV row's first cell; `nil` before the first data line.
    func lastCursor(csv: Bool) -> String? {
        let prefix = Array(#"{"cursor":""#.utf8)
        if csv {
            guard let comma = lastLine.firstIndex(of: 0x2C), lines > 1 else { return nil }
            return String(decoding: lastLine[..<comma], as: UTF8.self)
        }
        guard lastLine.starts(with: prefix), let end = lastLine[prefix.count...].firstIndex(of: 0x22) else { return nil }
        return String(decoding: lastLine[prefix.count..<end], as: UTF8.self)
    }

    /// Ends the progress line, if one was shown.
    func finishProgress() {
        guard showsProgress, lines > 0 else { return }
        progress(force: true)
        writeToStandardError("\n")
    }

    private func progress(force: Bool = false) {
        guard showsProgress else { return }
        let now = ContinuousClock.now
        guard force || now - lastProgress >= .milliseconds(250) else { return }
        lastProgress = now
        let elapsed = now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let rate = seconds > 0 ? Int(Double(lines) / seconds) : 0
        writeToStandardError("\r\(name): \(lines) lines, \((bytes + pending.count) >> 20) MB, \(rate) lines/s")
    }
}
