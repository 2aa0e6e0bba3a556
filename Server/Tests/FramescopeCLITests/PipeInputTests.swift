import Foundation
import Testing

/// Recordings from pipes, standard input, FIFOs, process substitutions and gzip: each gives
/// exactly what the plain file gives, read once, in one pass.
@Suite("framescope reads pipes, standard input and gzip", .serialized)
struct PipeInputTests {
    let directory: TemporaryDirectory
    init() throws { directory = try TemporaryDirectory() }

    /// The shared corpus of other tools' recordings (`../shared/corpus` beside the repository).
    static var corpus: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("shared/corpus")
    }

    /// Runs `script` with bash, `$B` set to the built `framescope`.
    func bash(_ script: String, stdin: [UInt8]? = nil) throws -> CLIResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", script]
        var environment = ProcessInfo.processInfo.environment
        environment["B"] = CLI.binary.path
        process.environment = environment
        process.currentDirectoryURL = directory.url
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return CLIResult(exitCode: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                         stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// `framescope analyze --format json -` with `bytes` written to its standard input in
    /// chunks of `chunk` bytes, pausing `pause` seconds between them.
    func trickle(_ bytes: [UInt8], chunk: Int, pause: Double) throws -> CLIResult {
        let process = Process()
        process.executableURL = CLI.binary
        process.arguments = ["analyze", "--format", "json", "-"]
        let input = Pipe(), out = Pipe(), err = Pipe()
        process.standardInput = input
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let writer = Thread {
            var offset = 0
            while offset < bytes.count {
                let end = min(bytes.count, offset + chunk)
                input.fileHandleForWriting.write(Data(bytes[offset..<end]))
                offset = end
                if pause > 0 { Thread.sleep(forTimeInterval: pause) }
            }
            try? input.fileHandleForWriting.close()
        }
        writer.start()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return CLIResult(exitCode: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                         stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// The test's own recordings: CSV and JSON traces, a trace that needs an inferred rate,
    /// a report written by `analyze --format json`, and a broken trace.
    func fixtures() throws -> [String] {
        var paths = [
            try directory.file("trace.csv", csvTrace([1, 1, 2, 1, 1, 4, 1, 1], segments: ["", "a", "a", "a", "", "b", "b", ""])),
            try directory.file("bare.csv", "timestamp\n" + (0..<40).map { String(format: "%.6f", Double($0) / 60) }.joined(separator: "\n") + "\n"),
            try directory.file("broken.csv", "timestamp,targetTimestamp\n1.0,1.01\n1.02,oops\n"),
        ]
        var ticks: [String] = []
        for index in 0..<90 {
            let t = 5 + Double(index) / 60 + (index == 40 ? 0.05 : 0)
            ticks.append(#"{"timestamp": \#(t), "targetTimestamp": \#(t + 1.0 / 60)\#(index >= 30 && index < 60 ? #", "segment": "scroll""# : "")}"#)
        }
        paths.append(try directory.file("trace.json", #"{"refreshRate": 60, "ticks": [\#(ticks.joined(separator: ",\n"))]}"#))
        let report = try CLI.run(["analyze", "--format", "json", paths[0]])
        #expect(report.exitCode == 0, "\(report.stderr)")
        paths.append(try directory.file("report.json", report.stdout))
        return paths
    }

    /// Every file of the shared corpus (other tools' recordings; most are not readable yet,
    /// and must then fail the same way from a pipe as from the file).
    func corpusFiles() throws -> [String] {
        let root = Self.corpus
        let enumerator = try #require(FileManager.default.enumerator(atPath: root.path), "no corpus at \(root.path)")
        return enumerator.compactMap { $0 as? String }.filter { !$0.hasSuffix(".md") && !$0.hasPrefix(".") }
            .map { root.appendingPathComponent($0).path }
            .filter { var isDirectory: ObjCBool = false; return FileManager.default.fileExists(atPath: $0, isDirectory: &isDirectory) && !isDirectory.boolValue }
            .sorted()
    }

    @Test("Every fixture and corpus file: a pipe, a process substitution, a FIFO and gzip (file and pipe) give the file's answer")
    func everyFileEveryWay() throws {
        let files = try fixtures() + corpusFiles()
        #expect(files.count >= 25, "\(files.count) files")
        for (index, file) in files.enumerated() {
            let quoted = "'\(file)'"
            let plain = try bash("$B analyze --format json \(quoted)")
            // Each way, and how its messages name the input (a pattern).
            let fifo = "fifo-input-\(index)", gzipped = "gzip-input-\(index).gz"
            // A writer whose reader stopped early (a bad first line) may complain of a broken
            // pipe on its own stderr: only framescope's is compared.
            let ways: [(name: String, script: String, shownAs: String)] = [
                ("pipe", "cat \(quoted) 2>/dev/null | $B analyze --format json -", "stdin"),
                ("process substitution", "$B analyze --format json <(cat \(quoted) 2>/dev/null)", "/dev/fd/[0-9]+"),
                ("FIFO", "rm -f \(fifo); mkfifo \(fifo); (cat \(quoted) > \(fifo) 2>/dev/null &); $B analyze --format json \(fifo)", fifo),
                ("gzip file", "gzip -c \(quoted) > \(gzipped); $B analyze --format json \(gzipped)", gzipped),
                ("gzip pipe", "gzip -c \(quoted) 2>/dev/null | $B analyze --format json -", "stdin"),
            ]
            for way in ways {
                let result = try bash(way.script)
                #expect(result.exitCode == plain.exitCode, "\(way.name), \(file): exit \(result.exitCode), file gives \(plain.exitCode): \(result.stderr)")
                #expect(result.stdout == plain.stdout, "\(way.name), \(file): a different report")
                // The same message, naming the input as the way names it.
                let expected = plain.stderr.replacingOccurrences(of: file, with: "NAME")
                let got = result.stderr.replacingOccurrences(of: way.shownAs, with: "NAME", options: .regularExpression)
                #expect(got == expected, "\(way.name), \(file): \(result.stderr)")
            }
        }
    }

    @Test("A writer that trickles odd-sized chunks with pauses, across every buffer boundary, gives the file's answer")
    func trickledInput() throws {
        let files = try fixtures()
        for file in [files[0], files[3], files[4]] {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: file)))
            let plain = try CLI.run(["analyze", "--format", "json", file])
            for chunk in [1, 2, 3, 7, 13, 511, 4099] {
                let result = try trickle(bytes, chunk: chunk, pause: chunk < 7 ? 0 : 0.001)
                #expect(result.exitCode == 0 && result.stdout == plain.stdout, "\(file) in chunks of \(chunk): \(result.stderr)")
            }
            // gzip trickled too: the decompressor sees its header, blocks and trailer split.
            let gzipped = try bash("gzip -c '\(file)' | base64 -w0")
            let compressed = Array(try #require(Data(base64Encoded: gzipped.stdout)))
            for chunk in [1, 5, 64] {
                let result = try trickle(compressed, chunk: chunk, pause: 0)
                #expect(result.exitCode == 0 && result.stdout == plain.stdout, "gzip of \(file) in chunks of \(chunk): \(result.stderr)")
            }
        }
    }

    @Test("Empty standard input is bad input (65); two '-' in one command is a usage error (64)")
    func emptyAndTwice() throws {
        let trace = try fixtures()[0]
        let empty = try bash("$B analyze - < /dev/null")
        #expect(empty.exitCode == 65)
        #expect(empty.stderr.contains("stdin: is empty"), "\(empty.stderr)")
        #expect(empty.stdout.isEmpty)
        let twice = try bash("cat '\(trace)' 2>/dev/null | $B analyze - -")
        #expect(twice.exitCode == 64, "\(twice.stderr)")
        #expect(twice.stderr.contains("once"), "\(twice.stderr)")
        let compare = try bash("cat '\(trace)' 2>/dev/null | $B compare - -")
        #expect(compare.exitCode == 64)
        let check = try bash("echo '{\"recording\": {\"droppedFrames\": {\"max\": 0}}}' | $B check --budget - -")
        #expect(check.exitCode == 64)
    }

    @Test("A budget from a process substitution or a pipe; compare with one side from standard input")
    func budgetAndCompareFromPipes() throws {
        let trace = try fixtures()[0]
        let failing = try bash(#"$B check --budget <(echo '{"recording": {"droppedFrames": {"max": 0}}}') '\#(trace)'"#)
        #expect(failing.exitCode == 1, "\(failing.stderr)")
        #expect(failing.stdout.contains("1 limit broken"), "\(failing.stdout)")
        let passing = try bash(#"echo '{"recording": {"droppedFrames": {"max": 100}}}' | $B check --budget - '\#(trace)'"#)
        #expect(passing.exitCode == 0, "\(passing.stderr)")
        let piped = try bash(#"echo '{"recording": {"droppedFrames": {"max": 0}}}' > budget.json; cat '\#(trace)' | $B check --budget budget.json --format json -"#)
        #expect(piped.exitCode == 1)
        #expect(piped.stdout.contains(#""file" : "stdin""#), "\(piped.stdout)")
        let compared = try bash("gzip -c '\(trace)' | $B compare --format json - '\(trace)'")
        #expect(compared.exitCode == 0, "\(compared.stderr)")
        #expect(compared.stdout.contains(#""baseline" : "stdin""#), "\(compared.stdout)")
    }

    @Test("A truncated gzip stream: exit 65 naming the compressed byte offset, the report of what came before it")
    func truncatedGzip() throws {
        var lines = ["timestamp,targetTimestamp"]
        for index in 0..<200_000 { lines.append(String(format: "%.6f,%.6f", Double(index) / 60, Double(index + 1) / 60)) }
        let path = try directory.file("long.csv", lines.joined(separator: "\n") + "\n")
        let whole = try CLI.run(["analyze", "--format", "json", path])
        #expect(whole.exitCode == 0)
        let cut = try bash("gzip -c long.csv | head -c 300000 > cut.gz; $B analyze --format json cut.gz")
        #expect(cut.exitCode == 65)
        #expect(cut.stderr.contains("cut.gz: the gzip stream ends early, after 300000 compressed bytes"), "\(cut.stderr)")
        let partial = try #require(try JSONSerialization.jsonObject(with: Data(cut.stdout.utf8)) as? [String: Any], "no partial report: \(cut.stdout)")
        let frames = try #require(partial["frames"] as? Int)
        let all = try #require((try JSONSerialization.jsonObject(with: Data(whole.stdout.utf8)) as? [String: Any])?["frames"] as? Int)
        #expect(frames > 0 && frames < all, "\(frames) of \(all) frames")
        // A corrupt stream (here its checksum, so every block inflates) names where zlib
        // found the damage, and gives no report: nothing before it can be trusted.
        let corrupt = try bash("gzip -c long.csv > c.gz; size=$(stat -c %s c.gz); printf 'XXXX' | dd of=c.gz bs=1 seek=$((size - 8)) conv=notrunc 2>/dev/null; $B analyze --format json c.gz")
        #expect(corrupt.exitCode == 65)
        #expect(corrupt.stderr.contains("not a valid gzip stream at compressed byte"), "\(corrupt.stderr)")
        #expect(corrupt.stderr.contains("incorrect data check"), "\(corrupt.stderr)")
        #expect(corrupt.stdout.isEmpty)
    }

    @Test("A gzip bomb stops with a clear error past the documented ratio")
    func gzipBomb() throws {
        // A valid trace header, then one line repeated: deflate squeezes it about 1,000 times.
        let bomb = try bash("(echo timestamp,targetTimestamp; yes 1.0,1.0166666 | head -c 200000000) | gzip -c > bomb.gz; $B analyze bomb.gz")
        #expect(bomb.exitCode == 65)
        #expect(bomb.stderr.contains("refused as a gzip bomb"), "\(bomb.stderr)")
    }

    @Test("'-' with a terminal on standard input says, in one line on stderr, what it waits for")
    func terminalHint() throws {
        // A real pseudo-terminal on standard input (opened here rather than through script(1),
        // whose handling of its own input differs between util-linux versions).
        let (master, terminal) = try openPseudoTerminal()
        defer { close(master) }
        let process = Process()
        process.executableURL = CLI.binary
        process.arguments = ["analyze", "-"]
        let err = Pipe()
        process.standardInput = FileHandle(fileDescriptor: terminal, closeOnDealloc: true)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = err
        try process.run()
        // A command that never prints the hint would wait on the terminal for ever: end it
        // after 15 s so the test fails instead of hanging the run.
        DispatchQueue.global().asyncAfter(deadline: .now() + 15) {
            if process.isRunning { process.terminate() }
        }
        // The hint comes before the first read; then end-of-file from the terminal (Ctrl-D at
        // the start of a line) ends the read, and the command ends as for empty input.
        var seen = Data()
        let hint = "framescope: reading a recording from standard input; pipe one in or name a file\n"
        while !String(decoding: seen, as: UTF8.self).contains(hint) {
            let chunk = err.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            seen.append(chunk)
        }
        var endOfFile: UInt8 = 4
        #expect(write(master, &endOfFile, 1) == 1)
        seen.append(err.fileHandleForReading.readDataToEndOfFile())
        process.waitUntilExit()
        let stderr = String(decoding: seen, as: UTF8.self)
        #expect(stderr.hasPrefix(hint), "\(stderr)")
        #expect(stderr.contains("stdin: is empty"), "\(stderr)")
        #expect(process.terminationStatus == 65)
        let piped = try bash("echo 'timestamp' | $B analyze - 2>&1")
        #expect(!piped.stdout.contains("reading a recording from standard input"))
    }

    @Test("On a terminal, a large file shows a bar with the share, megabytes and rate on stderr; through a pipe, nothing")
    func progressBar() throws {
        let generated = try CLI.run(["bench", "analyze", "--ticks", "600000", "--output", directory.url.appendingPathComponent("big.csv").path])
        #expect(generated.exitCode == 0, "\(generated.stderr)")
        let path = directory.url.appendingPathComponent("big.csv").path
        let (master, terminal) = try openPseudoTerminal()
        defer { close(master) }
        let process = Process()
        process.executableURL = CLI.binary
        process.arguments = ["analyze", path]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle(fileDescriptor: terminal, closeOnDealloc: false)
        process.standardError = FileHandle(fileDescriptor: terminal, closeOnDealloc: false)
        try process.run()
        // Only the child holds the terminal now: reading the master ends (EIO) when it exits.
        close(terminal)
        DispatchQueue.global().asyncAfter(deadline: .now() + 60) { if process.isRunning { process.terminate() } }
        var seen = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(master, &buffer, buffer.count)
            if count <= 0 { break }
            seen.append(contentsOf: buffer[0..<count])
        }
        process.waitUntilExit()
        let text = String(decoding: seen, as: UTF8.self)
        #expect(process.terminationStatus == 0)
        #expect(text.range(of: #"big\.csv \[█*░*\] [0-9]+ % [0-9]+ of [0-9]+ MB, [0-9]+ MB/s"#, options: .regularExpression) != nil, "\(text.prefix(400))")
        let piped = try bash("$B analyze '\(path)' 2>&1 >/dev/null")
        #expect(!piped.stdout.contains("MB/s"), "\(piped.stdout)")
    }

    @Test("Concatenated gzip members read as one recording")
    func concatenatedMembers() throws {
        let trace = try fixtures()[0]
        let text = try String(contentsOfFile: trace, encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let head = lines.prefix(5).joined(separator: "\n") + "\n"
        let tail = lines.dropFirst(5).joined(separator: "\n")
        _ = try directory.file("head.part", head)
        _ = try directory.file("tail.part", tail)
        let joined = try bash("(gzip -c head.part; gzip -c tail.part) | $B analyze --format json -")
        let plain = try CLI.run(["analyze", "--format", "json", trace])
        #expect(joined.exitCode == 0 && joined.stdout == plain.stdout, "\(joined.stderr)")
    }
}

/// Opens a pseudo-terminal pair: the master end (the "keyboard") and the terminal end a child
/// process reads as its standard input.
func openPseudoTerminal() throws -> (master: Int32, terminal: Int32) {
    func failure(_ step: String) -> some Error {
        CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "\(step): \(String(cString: strerror(errno)))"])
    }
    let master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
    guard master >= 0 else { throw failure("/dev/ptmx") }
    #if os(Linux)
    // Glibc's module does not bring in grantpt/unlockpt/ptsname (they sit behind
    // _XOPEN_SOURCE), so ask the kernel directly: TIOCSPTLCK unlocks, TIOCGPTN names the
    // terminal end (linux/include/uapi/asm-generic/ioctls.h).
    var unlock: Int32 = 0
    var number: UInt32 = 0
    guard ioctl(master, UInt(0x4004_5431), &unlock) == 0 else { close(master); throw failure("TIOCSPTLCK") }
    guard ioctl(master, UInt(0x8004_5430), &number) == 0 else { close(master); throw failure("TIOCGPTN") }
    let path = "/dev/pts/\(number)"
    #else
    guard grantpt(master) == 0, unlockpt(master) == 0, let name = ptsname(master) else { close(master); throw failure("ptsname") }
    let path = String(cString: name)
    #endif
    let terminal = open(path, O_RDWR | O_NOCTTY)
    guard terminal >= 0 else { close(master); throw failure(path) }
    return (master, terminal)
}
