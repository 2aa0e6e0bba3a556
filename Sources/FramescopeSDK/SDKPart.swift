/// A part of the SDK that runs between ``Framescope/start()`` and ``Framescope/stop()``: the
/// MetricKit forwarding, the hang watchdog, the visits' pipeline and uploader, and on Apple
/// platforms the network monitor and the display-link driver.
///
/// ``Framescope`` holds its parts in one list: it starts them in order, flushes them all at
/// once, and stops them one after another in reverse order, each stopped before the next
/// begins to stop, as swift-service-lifecycle's `ServiceGroup` shuts its services down. A
/// part that others feed is therefore started before them and stopped after them: the
/// visits' pipeline stops (draining what was closed) while the watchdog still reports the
/// hangs of the last visit, and the display link stops first, so no tick arrives at a part
/// that has stopped.
///
/// Parts with nothing to start from outside (the screen tracker, the resource sampler, the
/// fatal-hang recorder, the hang log) are not parts: the watchdog and the pipeline drive them.
@MainActor
protocol SDKPart: AnyObject {
    /// Starts the part; the facade calls it once.
    func start()

    /// Delivers what the part holds and waits until it is delivered or `timeout` seconds
    /// have passed.
    /// - Returns: Whether nothing is left to deliver. A part that holds nothing to deliver
    ///   answers true at once (the default).
    func flush(timeout: Double) async -> Bool

    /// Stops the part for good and returns once it has stopped; what it holds stays for
    /// the next launch.
    func stop() async

    /// Adds the part's counters to `statistics`. A part without counters adds nothing (the
    /// default).
    func addStatistics(to statistics: inout Framescope.Statistics) async
}

extension SDKPart {
    /// Nothing to deliver: true at once.
    func flush(timeout: Double) async -> Bool { true }

    /// No counters.
    func addStatistics(to statistics: inout Framescope.Statistics) async {}
}

extension HangWatchdog: SDKPart {
    /// Adds the hangs seen, sampled and idle.
    func addStatistics(to statistics: inout Framescope.Statistics) async {
        let counts = self.statistics
        statistics.hangs = counts.hangs
        statistics.sampledHangs = counts.sampledHangs
        statistics.idleHangs = counts.idleHangs
    }
}
