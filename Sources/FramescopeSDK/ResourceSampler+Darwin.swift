#if canImport(Darwin)
// Newer SDKs mark `mach_task_self_` safe to read concurrently; older ones need
// @preconcurrency (as apple/swift-system does).
#if canImport(Darwin, _version: 310)
import Darwin.Mach
#else
@preconcurrency import Darwin.Mach
#endif
import Darwin

extension ResourceReading {
    /// The process's counters now: CPU time from `getrusage(RUSAGE_SELF)` (all threads,
    /// finished ones included), resident memory from `task_info(MACH_TASK_BASIC_INFO)`;
    /// nil when either call fails.
    @Sendable
    static func current() -> ResourceReading? {
        var usage = rusage()
        guard getrusage(RUSAGE_SELF, &usage) == 0 else { return nil }
        let cpuSeconds = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6

        var info = mach_task_basic_info()
        // MACH_TASK_BASIC_INFO_COUNT: the struct's size in natural_t units.
        var count = mach_msg_type_number_t(MemoryLayout<mach_task_basic_info>.size / MemoryLayout<natural_t>.size)
        let result = withUnsafeMutablePointer(to: &info) { pointer in
            pointer.withMemoryRebound(to: integer_t.self, capacity: Int(count)) {
                task_info(mach_task_self_, task_flavor_t(MACH_TASK_BASIC_INFO), $0, &count)
            }
        }
        guard result == KERN_SUCCESS else { return nil }
        return ResourceReading(cpuSeconds: cpuSeconds, residentBytes: UInt64(info.resident_size))
    }
}
#endif
