import ArgumentParser
import Foundation
import FramescopeCore
import FramescopeScroll
import FramescopeRecording
import FramescopeTraces

/// `framescope record`: recordings of real renderers.
struct RecordCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record a real renderer's frames while a script scrolls it.",
        subcommands: [RecordChromeCommand.self]
    )
}

/// `framescope record chrome URL --script steady|accelerating --output trace.json`.
struct RecordChromeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chrome",
        abstract: "Scroll a page in headless Chromium, record its compositor's frames, and analyze them.",
        discussion: """
            Starts headless Chromium (the first of chromium, chromium-browser, google-chrome \
            on PATH, or --chromium), loads URL at 1280×800 CSS pixels and device scale \
            factor 1, waits for the page's window.__ready if it sets one, scrolls the \
            element (--selector, else the one marked data-framescope-scroll, else the \
            document) with the scroll script on the page's animation frames, and writes \
            the DevTools trace of the frame events to --output. Then prints the report of \
            that trace, as 'framescope analyze' would. 'framescope dataset messages --html' \
            makes pages to scroll. With --watch SECONDS nothing scrolls: the page runs by \
            itself (its window.framescopeStart() is called when the trace begins, if it \
            defines one), for pages that animate on a timer, idle, or draw at a lower rate \
            than the display.

            With --runs N it records N runs a side for 'framescope compare': one page N \
            times, or two pages (a baseline and a candidate) alternately, base, candidate, \
            base, …, after one discarded warm-up run of each, so that drift of the machine \
            falls on both alike. --output is then a folder; each run is written as \
            <page name>-<n>.json (the file's stem or the URL's last path segment) and the \
            compare command to run on them is printed.
            """
    )

    @Argument(help: "The page: a URL or a file path; with --runs, a baseline and a candidate page.")
    var pages: [String] = []

    /// The page of the one-recording form.
    var url: String { pages.first ?? "" }

    @Option(help: ArgumentHelp("Record this many runs of each page (2 to 50), interleaved; --output is then a folder.", valueName: "n"))
    var runs: Int?

    @Option(help: "The scroll script: steady (1500 px/s for 4 s) or accelerating (500 to 5000 px/s over 4 s).")
    var script: ScrollRamp.Name = .steady

    @Option(help: "A CSS selector of the element to scroll.")
    var selector: String?

    @Option(help: ArgumentHelp("Record the page running by itself for this many seconds (0.5 to 60) instead of scrolling it.", valueName: "seconds"))
    var watch: Double?

    @Option(help: ArgumentHelp("Where to write the Chrome JSON trace (with --runs, the folder for the runs' traces).", valueName: "path"))
    var output: String

    @Option(help: ArgumentHelp("The Chromium executable.", valueName: "path"))
    var chromium: String?

    @Option(help: "Output format of the report.")
    var format: OutputFormat = .table

    @OptionGroup var options: AnalysisOptions

    func validate() throws {
        if let runs {
            guard (2...50).contains(runs) else { throw ValidationError("--runs must be 2 to 50, not \(runs)") }
            guard (1...2).contains(pages.count) else { throw ValidationError("--runs records one page, or a baseline and a candidate page") }
        } else {
            guard pages.count == 1 else { throw ValidationError("Give one page to record; two (a baseline and a candidate) need --runs N") }
        }
    }

    func run() async throws {
        guard let browser = chromium ?? RecordChromeCommand.defaultChromium() else {
            throw CLIFailure(exitCode: CLIFailure.ioError, message: "no Chromium found on PATH (chromium, chromium-browser, google-chrome); install it or pass --chromium PATH")
        }
        if let watch, !(0.5...60).contains(watch) {
            throw ValidationError("--watch must be 0.5 to 60 seconds, not \(watch)")
        }
        if watch != nil, selector != nil {
            throw ValidationError("--selector names the element to scroll; with --watch nothing scrolls")
        }
        if let runs { return try await recordRuns(runs, browser: browser) }
        let page = Self.pageURL(url)
        var recording = ChromeRecorder.Options(url: page, script: ScrollRamp(script), selector: selector, chromium: browser)
        recording.watch = watch
        let summary: ChromeRecorder.Summary
        do {
            summary = try await ChromeRecorder().record(recording, to: output)
        } catch let error as RecordingError {
            throw CLIFailure(exitCode: CLIFailure.ioError, message: "record chrome \(url): \(error)")
        }
        let distance = ScrollRamp(script).distance
        if let watch {
            writeToStandardError("framescope: recorded \(page) in \(summary.browser) running by itself for \(formatToolValue(watch)) s; \(summary.traceBytes) bytes of trace in \(output)\n")
        } else {
            writeToStandardError("framescope: recorded \(page) in \(summary.browser): scrolled \(Int(summary.scrolled.rounded())) of \(Int(distance)) px on \(summary.animationFrames) animation frames; \(summary.traceBytes) bytes of trace in \(output)\n")
        }
        if watch == nil, summary.scrolled < 0.9 * distance {
            writeToStandardError("framescope: the element could scroll only \(Int(summary.scrolled.rounded())) px of the script's \(Int(distance)): the frames after its end are idle\n")
        }
        let loaded = try ReportLoader(options: options).loadInput(output)
        switch format {
        case .json: print(try encodeJSON(loaded.report))
        case .table: print("\(loaded.name)\n\n\(renderReport(loaded.report))")
        }
    }

    /// `--runs`: a warm-up run of each page (discarded), then `count` rounds of one run of
    /// each page in turn, each written as `<name>-<n>.json` in the output folder; prints the
    /// compare command.
    func recordRuns(_ count: Int, browser: String) async throws {
        let folder = URL(fileURLWithPath: output)
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw CLIFailure(exitCode: CLIFailure.ioError, message: "record chrome: cannot create the folder \(output): \(error.localizedDescription)")
        }
        var names = pages.map(Self.pageName)
        if names.count == 2, names[0] == names[1] { names = ["baseline-" + names[0], "candidate-" + names[1]] }
        var written: [[String]] = pages.map { _ in [] }
        for round in 0...count {
            for (side, page) in pages.enumerated() {
                var recording = ChromeRecorder.Options(url: Self.pageURL(page), script: ScrollRamp(script), selector: selector, chromium: browser)
                recording.watch = watch
                // Round 0 warms the browser and the page's caches up; its trace is not kept.
                let path = round == 0 ? folder.appendingPathComponent(".warm-up-\(side).json").path
                    : folder.appendingPathComponent("\(names[side])-\(round).json").path
                do {
                    _ = try await ChromeRecorder().record(recording, to: path)
                } catch let error as RecordingError {
                    throw CLIFailure(exitCode: CLIFailure.ioError, message: "record chrome \(page), run \(round): \(error)")
                }
                if round == 0 {
                    try? FileManager.default.removeItem(atPath: path)
                } else {
                    written[side].append(path)
                    writeToStandardError("framescope: \(names[side]) run \(round) of \(count): \(path)\n")
                }
            }
        }
        func quoted(_ paths: [String]) -> String { paths.map(shellQuoted).joined(separator: " ") }
        if written.count == 2 {
            print("framescope compare --baseline \(quoted(written[0])) --candidate \(quoted(written[1]))")
        } else {
            print("framescope analyze \(quoted(written[0]))")
        }
    }

    /// A page's name for its runs' files: the file's stem, or the URL's last path segment
    /// (`page` when it has none), with anything but letters, digits, `-`, `_` and `.` as `_`.
    static func pageName(_ page: String) -> String {
        let last = page.contains("://") ? (URL(string: page)?.deletingPathExtension().lastPathComponent ?? "")
            : URL(fileURLWithPath: page).deletingPathExtension().lastPathComponent
        let cleaned = String(last.map { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) ? $0 : "_" })
        return cleaned.isEmpty || cleaned == "/" || cleaned.allSatisfy({ $0 == "." }) ? "page" : cleaned
    }

    /// `FRAMESCOPE_CHROMIUM`, else the first Chromium on `PATH`.
    static func defaultChromium() -> String? {
        ProcessInfo.processInfo.environment["FRAMESCOPE_CHROMIUM"] ?? ChromeRecorder.findChromium()
    }

    /// `text` as a URL: itself when it has a scheme, else a `file://` URL of the path.
    static func pageURL(_ text: String) -> String {
        if text.contains("://") || text.hasPrefix("data:") || text.hasPrefix("about:") { return text }
        return URL(fileURLWithPath: text).absoluteString
    }
}

extension ScrollRamp.Name: @retroactive ExpressibleByArgument {}

/// `text` as one word for a POSIX shell: itself when it holds only safe characters, else in
/// single quotes (a single quote inside written `'\''`).
func shellQuoted(_ text: String) -> String {
    let safe = !text.isEmpty && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_./=:,+@%".contains($0)) }
    return safe ? text : "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
}
