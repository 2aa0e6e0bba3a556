import Foundation
import Testing

/// The SDK's tests that time real threads against a running collector or in a process of
/// their own, nested so they run one at a time (two at once would measure each other).
///
/// Like the device package's suite of the same name they run in a test process of their
/// own: in the whole parallel run on two cores the collector's suites hold both cores for
/// minutes, and a 300 ms hang or a 1.5 s visit measured beside them comes out a second
/// long (session 17's fresh-clone CI saw it). scripts/test runs them after the main run
/// with `FRAMESCOPE_ISOLATED_TIMING=1`.
@Suite("FramescopeSDK end to end on real threads", .serialized,
       .enabled(if: isolatedTiming,
                "runs in its own process: FRAMESCOPE_ISOLATED_TIMING=1 swift test --package-path Server --filter RealThreadTests"))
enum RealThreadTests {}

/// Whether this process is the isolated timing run (`FRAMESCOPE_ISOLATED_TIMING` set).
let isolatedTiming = ProcessInfo.processInfo.environment["FRAMESCOPE_ISOLATED_TIMING"] != nil
