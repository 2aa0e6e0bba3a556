import Foundation

/// A headless Chromium of its own: a fresh profile in a temporary directory, a DevTools
/// port the browser picks, stopped and its profile removed by ``stop()``.
struct ChromeBrowser {
    let process: Process
    let profile: URL
    /// The browser's DevTools WebSocket URL (`ws://127.0.0.1:PORT/devtools/browser/…`).
    let webSocketURL: String

    /// Starts `executable` headless with a window of `width`×`height` CSS pixels and waits
    /// (at most `timeout` seconds) for it to say where its DevTools listen.
    /// - Throws: ``RecordingError`` when it cannot start or does not say in time.
    static func launch(executable: String, width: Int, height: Int, timeout: Double = 30) async throws -> ChromeBrowser {
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("framescope-chrome-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: profile, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = [
            "--headless=new", "--no-sandbox", "--remote-debugging-port=0", "--remote-allow-origins=*", "--user-data-dir=\(profile.path)",
            "--window-size=\(width),\(height)", "--no-first-run", "--no-default-browser-check", "--mute-audio",
            "--hide-scrollbars", "--disable-extensions", "--disable-background-networking", "about:blank",
        ]
        // Chromium talks a lot on stderr (D-Bus, GPU): nothing of it is needed, and a full
        // pipe would stop it.
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            try? FileManager.default.removeItem(at: profile)
            throw RecordingError.browser("could not start \(executable): \(error.localizedDescription)")
        }
        // The browser writes its port and path to DevToolsActivePort once it listens.
        let portFile = profile.appendingPathComponent("DevToolsActivePort")
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let text = try? String(contentsOf: portFile, encoding: .utf8) {
                let lines = text.split(separator: "\n")
                if lines.count >= 2, let port = Int(lines[0]) {
                    return ChromeBrowser(process: process, profile: profile, webSocketURL: "ws://127.0.0.1:\(port)\(lines[1])")
                }
            }
            guard process.isRunning else {
                try? FileManager.default.removeItem(at: profile)
                throw RecordingError.browser("\(executable) exited with status \(process.terminationStatus) before its DevTools listened")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        process.terminate()
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: profile)
        throw RecordingError.browser("\(executable) did not open its DevTools port within \(Int(timeout)) s")
    }

    /// Ends the browser and removes its profile.
    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: profile)
    }

    /// The first Chromium on `PATH` (`chromium`, `chromium-browser`, `google-chrome`,
    /// `google-chrome-stable`), or `nil`.
    static func find(path: String? = ProcessInfo.processInfo.environment["PATH"]) -> String? {
        let directories = (path ?? "/usr/bin:/bin").split(separator: ":").map(String.init)
        for name in ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"] {
            for directory in directories {
                let candidate = directory + "/" + name
                if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            }
        }
        return nil
    }
}
