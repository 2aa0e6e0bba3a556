import Foundation
import FramescopeCore
import FramescopeScroll
import HummingbirdWSClient
import Logging

/// Records a real renderer's frames: starts headless Chromium, loads a page, scrolls an
/// element with a ``ScrollRamp`` from the page's own animation frames, and writes the
/// DevTools trace of the compositor's frame events (`PipelineReporter`, `BeginFrame`,
/// `DrawFrame`, `DroppedFrame`) as a Chrome JSON trace that `framescope analyze` reads.
///
/// The protocol's steps (docs/traces.md, "Recording a page"): a target of its own,
/// attached with a flat session; the viewport fixed with
/// `Emulation.setDeviceMetricsOverride`; `Page.navigate` and `Page.loadEventFired`; the
/// page's `window.__ready` awaited; `Tracing.start` (stream, categories
/// `disabled-by-default-devtools.timeline.frame`, `__metadata`, `blink.user_timing`); the
/// scroll; `Tracing.end`; the stream read with `IO.read` into the output file.
public struct ChromeRecorder: Sendable {
    /// What to record.
    public struct Options: Sendable {
        /// The page: a URL (`file://`, `http://`, `data:`).
        public var url: String
        /// How to scroll.
        public var script: ScrollRamp
        /// A CSS selector of the element to scroll; `nil` for the page's element marked
        /// `data-framescope-scroll`, else the document's scrolling element.
        public var selector: String?
        /// The viewport, in CSS pixels (device scale factor 1).
        public var width = 1280
        /// The viewport's height, in CSS pixels.
        public var height = 800
        /// The Chromium executable.
        public var chromium: String
        /// The longest the whole recording may take, in seconds.
        public var timeout = 180.0
        /// Seconds to record the page running by itself instead of scrolling it (`script`
        /// and `selector` unused), or `nil` to scroll. The page's `window.framescopeStart()`
        /// is called when the trace begins, if it defines one: a page that animates on a
        /// timer, idles then janks, or draws at a lower rate than the display.
        public var watch: Double?

        /// Options for `url`, scrolled by `script`, in the browser at `chromium`.
        public init(url: String, script: ScrollRamp, selector: String? = nil, chromium: String) {
            self.url = url
            self.script = script
            self.selector = selector
            self.chromium = chromium
        }
    }

    /// What the recording did.
    public struct Summary: Sendable, Hashable {
        /// Bytes of trace written.
        public var traceBytes: Int
        /// How far the element scrolled, in CSS pixels.
        public var scrolled: Double
        /// The animation frames the script ran on.
        public var animationFrames: Int
        /// The browser's version ("Chrome/156.0.8078.79").
        public var browser: String
    }

    /// The trace categories recorded: the compositor's frame events, the process names and
    /// the script's marks. (A list of only `disabled-by-default-` categories would turn on
    /// every default category as well.)
    public static let categories = ["disabled-by-default-devtools.timeline.frame", "__metadata", "blink.user_timing"]

    /// The first Chromium on `PATH`, or `nil`.
    public static func findChromium() -> String? { ChromeBrowser.find() }

    /// A recorder; each ``record(_:to:logger:)`` starts a browser of its own.
    public init() {}

    /// Records `options`' page into a Chrome JSON trace at `output`.
    /// - Throws: ``RecordingError``; the browser is stopped and its profile removed either way.
    public func record(_ options: Options, to output: String, logger: Logger = Logger(label: "framescope.record")) async throws -> Summary {
        let browser = try await ChromeBrowser.launch(executable: options.chromium, width: options.width, height: options.height)
        defer { browser.stop() }
        let outcome = Outcome()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                var configuration = WebSocketClientConfiguration()
                configuration.maxFrameSize = DevToolsSession.maximumMessageBytes
                try await WebSocketClient.connect(url: browser.webSocketURL, configuration: configuration, logger: logger) { inbound, outbound, _ in
                    var session = DevToolsSession(inbound: inbound, outbound: outbound)
                    do {
                        let summary = try await Self.run(options, output: output, session: &session)
                        await outcome.set(.success(summary))
                    } catch {
                        await outcome.set(.failure(error))
                    }
                    try? await outbound.close(.normalClosure, reason: nil)
                }
            }
            group.addTask {
                try await Task.sleep(for: .seconds(options.timeout))
                throw RecordingError.timedOut(seconds: Int(options.timeout))
            }
            defer { group.cancelAll() }
            _ = try await group.next()
        }
        switch await outcome.value {
        case let .success(summary): return summary
        case let .failure(error): throw error
        case nil: throw RecordingError.protocol("the connection to the browser ended before the recording")
        }
    }

    private static func run(_ options: Options, output: String, session: inout DevToolsSession) async throws -> Summary {
        let version = try await session.call("Browser.getVersion")
        let target = try await session.call("Target.createTarget", ["url": "about:blank"])
        guard let targetID = target["targetId"] as? String else { throw RecordingError.protocol("Target.createTarget gave no targetId") }
        let attached = try await session.call("Target.attachToTarget", ["targetId": targetID, "flatten": true])
        guard let page = attached["sessionId"] as? String else { throw RecordingError.protocol("Target.attachToTarget gave no sessionId") }
        _ = try await session.call("Page.enable", session: page)
        _ = try await session.call("Runtime.enable", session: page)
        _ = try await session.call("Emulation.setDeviceMetricsOverride",
                                   ["width": options.width, "height": options.height, "deviceScaleFactor": 1, "mobile": false], session: page)
        let navigation = try await session.call("Page.navigate", ["url": options.url], session: page)
        if let problem = navigation["errorText"] as? String, !problem.isEmpty {
            throw RecordingError.page("could not load \(options.url): \(problem)")
        }
        _ = try await session.waitForEvent("Page.loadEventFired", session: page)
        _ = try await evaluate("Promise.resolve(window.__ready).then(() => true)", &session, page)
        if options.watch == nil {
            let check = try await evaluate(ScrollRamp.targetCheck(selector: options.selector), &session, page)
            if let problem = check["error"] as? String { throw RecordingError.page(problem) }
        }

        _ = try await session.call("Tracing.start", [
            "transferMode": "ReturnAsStream", "streamFormat": "json", "streamCompression": "none",
            "traceConfig": ["recordMode": "recordUntilFull", "includedCategories": categories],
        ], session: page)
        try await Task.sleep(for: .milliseconds(500))
        let scrolled: [String: Any]
        if let watch = options.watch {
            _ = try await evaluate("(() => { if (typeof window.framescopeStart === 'function') window.framescopeStart(); return {}; })()", &session, page)
            try await Task.sleep(for: .seconds(watch))
            scrolled = [:]
        } else {
            scrolled = try await evaluate(options.script.javaScript(selector: options.selector), &session, page)
        }
        try await Task.sleep(for: .milliseconds(300))
        _ = try await session.call("Tracing.end", session: page)
        let complete = try await session.waitForEvent("Tracing.tracingComplete", session: page)
        guard let stream = complete["stream"] as? String else { throw RecordingError.protocol("Tracing.tracingComplete gave no stream") }

        guard FileManager.default.createFile(atPath: output, contents: nil), let file = FileHandle(forWritingAtPath: output) else {
            throw RecordingError.page("cannot write \(output)")
        }
        defer { try? file.close() }
        var written = 0
        while true {
            let chunk = try await session.call("IO.read", ["handle": stream, "size": 1 << 20], session: page)
            let text = chunk["data"] as? String ?? ""
            let bytes = chunk["base64Encoded"] as? Bool == true ? (Data(base64Encoded: text) ?? Data()) : Data(text.utf8)
            try file.write(contentsOf: bytes)
            written += bytes.count
            if chunk["eof"] as? Bool == true { break }
        }
        _ = try await session.call("IO.close", ["handle": stream], session: page)
        _ = try? await session.call("Browser.close")
        return Summary(traceBytes: written, scrolled: scrolled["scrolled"] as? Double ?? 0,
                       animationFrames: scrolled["frames"] as? Int ?? 0, browser: version["product"] as? String ?? "")
    }

    /// Evaluates `expression` in the page, awaiting a promise, and returns its value as an object.
    private static func evaluate(_ expression: String, _ session: inout DevToolsSession, _ page: String) async throws -> [String: Any] {
        let result = try await session.call("Runtime.evaluate", ["expression": expression, "awaitPromise": true, "returnByValue": true], session: page)
        if let exception = result["exceptionDetails"] as? [String: Any] {
            let text = (exception["exception"] as? [String: Any])?["description"] as? String ?? exception["text"] as? String ?? "an exception"
            throw RecordingError.page("the page's script failed: \(text)")
        }
        return (result["result"] as? [String: Any])?["value"] as? [String: Any] ?? [:]
    }
}

/// The recording's result, handed out of the WebSocket's handler.
private actor Outcome {
    private(set) var value: Result<ChromeRecorder.Summary, any Error>?
    func set(_ result: Result<ChromeRecorder.Summary, any Error>) { value = result }
}

