#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The clock the SDK measures time with: nanoseconds since an arbitrary fixed point,
/// never going back, and not advancing while the system sleeps.
///
/// ``system`` reads `clock_gettime(CLOCK_MONOTONIC)` on Linux and
/// `clock_gettime_nsec_np(CLOCK_UPTIME_RAW)` on Darwin, which is `mach_absolute_time()`
/// in nanoseconds and the clock of `DispatchTime`, `CACurrentMediaTime()` and
/// `CADisplayLink` timestamps. Both stop while the system is suspended (Linux's
/// `CLOCK_BOOTTIME` and Darwin's `mach_continuous_time()` keep counting), so a device
/// asleep is never measured as a hang or as CPU time spread thin. Neither stops for a
/// *process* that is stopped (`SIGSTOP`, a debugger) or an iOS app suspended in the
/// background while the device is awake; the ``HangWatchdog`` detects those itself.
///
/// Tests pass a clock they drive, to play out a suspension without waiting for one.
public struct MonotonicClock: Sendable {
    /// Reads the clock, in nanoseconds.
    public let now: @Sendable () -> UInt64

    /// Creates a clock from a function returning nanoseconds that never decrease.
    public init(now: @escaping @Sendable () -> UInt64) {
        self.now = now
    }

    /// Reads the clock in seconds: the unit of tick timestamps, so a Linux app (or a test)
    /// stamps its ticks with it as `CADisplayLink` stamps them on Apple platforms.
    public func nowInSeconds() -> Double {
        seconds(now())
    }

    /// The system's monotonic clock (see the type's description), in nanoseconds.
    public static let system = MonotonicClock(now: systemMonotonicNanoseconds)
}

/// `CLOCK_MONOTONIC` on Linux, `CLOCK_UPTIME_RAW` on Darwin, in nanoseconds.
@Sendable
func systemMonotonicNanoseconds() -> UInt64 {
    #if canImport(Darwin)
    return clock_gettime_nsec_np(CLOCK_UPTIME_RAW)
    #else
    var time = timespec()
    // Cannot fail for CLOCK_MONOTONIC with a valid pointer (POSIX: EINVAL, EFAULT only).
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    #endif
}

/// Nanoseconds to seconds.
func seconds(_ nanoseconds: UInt64) -> Double {
    Double(nanoseconds) / 1e9
}

/// Seconds to nanoseconds, clamped to `0…UInt64.max` (NaN is 0), so no input can trap.
func nanoseconds(_ seconds: Double) -> UInt64 {
    let value = seconds * 1e9
    guard value > 0 else { return 0 }
    guard value < 1.8e19 else { return UInt64.max }
    return UInt64(value)
}

extension UInt64 {
    /// `self − other`, or 0 when `other` is larger (times read on two threads may be a
    /// few nanoseconds out of order).
    func minus(_ other: UInt64) -> UInt64 {
        self > other ? self - other : 0
    }
}
