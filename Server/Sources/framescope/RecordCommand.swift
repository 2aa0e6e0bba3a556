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
            """
    )

    @Argument(help: "The page: a URL or a file path.")
    var url: String

    @Option(help: "The scroll script: steady (1500 px/s for 4 s) or accelerating (500 to 5000 px/s over 4 s).")
    var script: ScrollRamp.Name = .steady

    @Option(help: "A CSS selector of the element to scroll.")
    var selector: String?

    @Option(help: ArgumentHelp("Record the page running by itself for this many seconds (0.5 to 60) instead of scrolling it.", valueName: "seconds"))
    var watch: Double?

    @Option(help: ArgumentHelp("Where to write the Chrome JSON trace.", valueName: "file"))
    var output: String

    @Option(help: ArgumentHelp("The Chromium executable.", valueName: "path"))
    var chromium: String?

    @Option(help: "Output format of the report.")
    var format: OutputFormat = .table

    @OptionGroup var options: AnalysisOptions

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
