import Dispatch
import Foundation
import Testing
@testable import FramescopeSDK

/// The SDK's tests that time real threads (or measure the whole process), nested so they run
/// one at a time: two of them at once (or a CPU-spinning test beside a hang test) would
/// measure each other.
///
/// They also run in a test process of their own: in the whole parallel run on two cores
/// the collector's suites hold both cores for minutes, and a 300 ms hang or a 1.5 s visit
/// measured beside them comes out a second long (the fresh-clone CI of session 17 saw it).
/// scripts/test runs them after the main run with `FRAMESCOPE_ISOLATED_TIMING=1`.
///
/// Only a test whose assertion is a real duration, a CPU share or the process's memory
/// belongs here. A real-thread test that waits for what happens (``HangEventLog/wait(timeout:until:)``,
/// a ``QueueGate`` released by the test) asserts nothing about time and runs in the main run.
@Suite("FramescopeSDK on real threads", .serialized,
       .enabled(if: ProcessInfo.processInfo.environment["FRAMESCOPE_ISOLATED_TIMING"] != nil,
                "runs in its own process: FRAMESCOPE_ISOLATED_TIMING=1 swift test --filter RealThreadTests"))
enum RealThreadTests {}

/// Collects what a watchdog reports, from any thread; a test waits for an event with
/// ``wait(timeout:until:)`` instead of sleeping.
final class HangEventLog: Sendable {
    private let events = Locked<[HangEvent]>([])
    /// Signalled at each event, for ``wait(timeout:until:)``.
    private let appended = DispatchSemaphore(value: 0)

    func append(_ event: HangEvent) {
        events.withLock { $0.append(event) }
        appended.signal()
    }

    /// Returns once `condition` holds for the events so far (true), or after `timeout` seconds
    /// without it (false). The timeout only bounds a failing test; a passing one returns as
    /// soon as the event arrives.
    func wait(timeout: Double = 30, until condition: (HangEventLog) -> Bool) -> Bool {
        let deadline = DispatchTime.now() + timeout
        while !condition(self) {
            guard appended.wait(timeout: deadline) == .success else { return condition(self) }
        }
        return true
    }

    var all: [HangEvent] {
        events.withLock { $0 }
    }

    /// The hangs that ended, with how they ended.
    var ended: [(hang: Hang, ending: HangEnding)] {
        all.compactMap { event in
            if case let .ended(hang, ending) = event { return (hang, ending) }
            return nil
        }
    }

    /// The hangs reported as begun.
    var began: [Hang] {
        all.compactMap { event in
            if case let .began(hang) = event { return hang }
            return nil
        }
    }
}

/// A clock that runs with the system's monotonic clock plus an offset the test can push
/// forward, as if the process had been stopped for that long.
final class SteppableClock: Sendable {
    private let offset = Locked<UInt64>(0)

    var clock: MonotonicClock {
        MonotonicClock { [offset] in
            systemMonotonicNanoseconds() + offset.withLock { $0 }
        }
    }

    func jump(by seconds: Double) {
        offset.withLock { $0 += UInt64(seconds * 1e9) }
    }
}

/// Keeps `queue` busy for `seconds` (a sleeping work item) and returns when that is over.
/// Returns when the block started, on the system monotonic clock. For a test whose subject is
/// how a real block of that length is measured; otherwise hold the queue with a ``QueueGate``.
@discardableResult
func block(_ queue: DispatchQueue, for seconds: Double) -> UInt64 {
    let started = Locked<UInt64>(0)
    let done = DispatchSemaphore(value: 0)
    queue.async {
        started.withLock { $0 = systemMonotonicNanoseconds() }
        // Real threads are the subject: the queue's thread is blocked for a real span.
        Thread.sleep(forTimeInterval: seconds)
        done.signal()
    }
    done.wait()
    return started.withLock { $0 }
}

/// Blocks a queue for a while without waiting for it: a sleeping work item. For a test that
/// races a real block's end (BusySpanTests' stopped process); otherwise use a ``QueueGate``.
final class Blocker: Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let startTime = Locked<UInt64>(0)

    /// Posts a work item that sleeps on `queue` for `seconds`.
    init(_ queue: DispatchQueue, for seconds: Double) {
        queue.async { [done, startTime] in
            startTime.withLock { $0 = systemMonotonicNanoseconds() }
            // Real threads are the subject: the queue's thread is blocked for a real span.
            Thread.sleep(forTimeInterval: seconds)
            done.signal()
        }
    }

    /// When the block began, on the system monotonic clock (0 before it began).
    var started: UInt64 {
        startTime.withLock { $0 }
    }

    /// Returns when the block is over.
    func wait() {
        done.wait()
    }
}

/// Holds a queue busy until the test lets it go: a work item that waits on a semaphore. The
/// test decides when the block ends (after the event it waits for), so nothing in it waits on
/// real time.
final class QueueGate: Sendable {
    private let opened = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    /// Posts the work item that holds `queue` until ``release()``.
    init(_ queue: DispatchQueue) {
        queue.async { [opened, finished] in
            opened.wait()
            finished.signal()
        }
    }

    /// Lets the queue go, and returns once the held work item is over.
    func release() {
        opened.signal()
        finished.wait()
    }
}

/// Seconds between two readings of the monotonic clock.
func elapsed(from start: UInt64, to end: UInt64) -> Double {
    (Double(end) - Double(start)) / 1e9
}
