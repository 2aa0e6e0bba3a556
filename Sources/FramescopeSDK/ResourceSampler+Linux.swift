#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Parsing `/proc/self/stat` and `/proc/self/statm` (see proc(5)): text in, numbers out.
/// Pure, so it is compiled and tested on every platform; only reading the files is Linux.
/// The text is raw bytes (the files are ASCII); parsing allocates nothing.
enum ProcFiles {
    /// The process's CPU time, `utime + stime` (fields 14 and 15), in clock ticks, from the
    /// text of `/proc/[pid]/stat`; nil when the text is not such a line.
    ///
    /// Field 2, the command name, is in parentheses and may itself contain spaces and
    /// parentheses (`(my (odd) app)`), so the fields are counted from the *last* `)`.
    static func cpuTicks(stat text: UnsafeRawBufferPointer) -> UInt64? {
        guard let close = text.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        // After the name, field 3 (state) comes first: utime is the 12th, stime the 13th.
        guard let (utime, stime) = numbers(in: UnsafeRawBufferPointer(rebasing: text[(close + 1)...]), at: (11, 12)) else { return nil }
        let (sum, overflow) = utime.addingReportingOverflow(stime)
        return overflow ? nil : sum
    }

    /// The resident set size in pages (field 2) from the text of `/proc/[pid]/statm`; nil
    /// when the text is not such a line.
    static func residentPages(statm text: UnsafeRawBufferPointer) -> UInt64? {
        numbers(in: text, at: (0, 1))?.1
    }

    /// Fields `wanted.0` and `wanted.1` (counted from 0) of the space-separated `text`, as
    /// unsigned decimal numbers; nil when either is missing, is not a number, or overflows.
    private static func numbers(in text: UnsafeRawBufferPointer, at wanted: (Int, Int)) -> (UInt64, UInt64)? {
        var first: UInt64?
        var field = -1
        var inField = false
        var value: UInt64 = 0
        var valid = false
        for byte in text {
            if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") {
                inField = false
                continue
            }
            if !inField {
                // Entering the next field: the one before it is complete.
                if field == wanted.0 {
                    guard valid else { return nil }
                    first = value
                } else if field == wanted.1 {
                    break
                }
                field += 1
                inField = true
                value = 0
                valid = true
            }
            guard field == wanted.0 || field == wanted.1 else { continue }
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else {
                valid = false
                continue
            }
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
            if overflow1 || overflow2 { valid = false }
            value = sum
        }
        guard field == wanted.1, valid, let first else { return nil }
        return (first, value)
    }
}

#if os(Linux)
extension ResourceReading {
    /// Clock ticks per second, for `/proc/self/stat`'s CPU times.
    private static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
    /// Bytes per page, for `/proc/self/statm`.
    private static let pageSize = UInt64(sysconf(Int32(_SC_PAGESIZE)))

    /// The process's counters now, from `/proc/self/stat` and `/proc/self/statm`; nil
    /// when either cannot be read or parsed.
    @Sendable
    static func current() -> ResourceReading? {
        guard let ticks = readProcFile("/proc/self/stat", ProcFiles.cpuTicks(stat:)),
              let pages = readProcFile("/proc/self/statm", ProcFiles.residentPages(statm:)),
              ticksPerSecond > 0 else { return nil }
        return ResourceReading(cpuSeconds: Double(ticks) / ticksPerSecond, residentBytes: pages &* pageSize)
    }

    /// Reads a small file into a temporary 4 KiB buffer (a stat line is at most about
    /// 1.1 KiB) and parses it.
    private static func readProcFile(_ path: String, _ parse: (UnsafeRawBufferPointer) -> UInt64?) -> UInt64? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return withUnsafeTemporaryAllocation(byteCount: 4096, alignment: 1) { buffer -> UInt64? in
            var filled = 0
            while filled < buffer.count {
                let count = read(fd, buffer.baseAddress.map { $0 + filled }, buffer.count - filled)
                if count < 0 && errno == EINTR { continue }
                guard count >= 0 else { return nil }
                if count == 0 { break }
                filled += count
            }
            guard filled < buffer.count else { return nil }  // larger than any stat line: not what we expect
            return parse(UnsafeRawBufferPointer(rebasing: buffer[..<filled]))
        }
    }
}
#endif
