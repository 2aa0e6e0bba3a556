import FramescopeCore

extension Framescope {
    /// Carries out what ``AppLifecycle`` decided, in order: pauses or resumes frames (a
    /// resume starts from a fresh first frame, so the time away is never a drop), pauses or
    /// resumes hang reports, and flushes the queue when the app goes to the background.
    ///
    /// ```swift
    /// framescope.apply(lifecycle.handle(.willResignActive))
    /// ```
    public func apply(_ actions: [AppLifecycle.Action]) {
        guard isSampled, !isStopped else { return }
        for action in actions {
            switch action {
            case .pauseFrames: tracker.pointee.pause(now: clock.now())
            case .resumeFrames: tracker.pointee.resume(now: clock.now())
            case .pauseHangReports: watchdog?.pause()
            case .resumeHangReports: watchdog?.resume()
            case .flush: Task { await self.flush(timeout: 5) }
            }
        }
    }

    /// How long the main thread was blocked, in seconds, when its latest blocked span
    /// reached the hang threshold and ended (or was last seen) within the last `seconds`:
    /// for the overlay, which cannot redraw while the main thread is blocked and so shows
    /// a hang as soon as it can. `nil` without a watchdog or such a span.
    public func recentHang(within seconds: Double = 1) -> Double? {
        guard let span = watchdog?.latestBusySpan, span.end >= span.start else { return nil }
        let blocked = Double(span.end - span.start) / 1e9
        let now = clock.now()
        let age = now >= span.end ? Double(now - span.end) / 1e9 : 0
        guard blocked >= configuration.tracker.analyzer.hangThreshold, age <= seconds else { return nil }
        return blocked
    }
}
