import FramescopeCore

/// One reading of the process's counters, as the platform gives them.
struct ResourceReading: Sendable, Equatable {
    /// CPU time used by all the process's threads so far, user plus system, in seconds.
    var cpuSeconds: Double
    /// Resident memory now, in bytes.
    var residentBytes: UInt64
}

/// The samples of one window (a screen visit): minimum, mean and maximum of CPU use and of
/// resident memory. A sample is the CPU use over the span since the previous sample and
/// the resident memory at its end.
struct ResourceWindow: Sendable, Equatable {
    /// How many samples were added.
    private(set) var samples = 0
    private var cpuMin = Double.infinity
    private var cpuMax = -Double.infinity
    /// CPU seconds and wall seconds over all samples, for the time-weighted mean.
    private var cpuSeconds = 0.0
    private var wallSeconds = 0.0
    private var residentMin = Double.infinity
    private var residentMax = -Double.infinity
    private var residentSum = 0.0

    /// Adds a sample: `cpuSeconds` of CPU time used over `wallSeconds` (> 0), and the
    /// resident memory at the end, in bytes.
    mutating func add(cpuSeconds: Double, wallSeconds: Double, residentBytes: UInt64) {
        guard wallSeconds > 0 else { return }
        let percent = 100 * Swift.max(0, cpuSeconds) / wallSeconds
        samples += 1
        cpuMin = Swift.min(cpuMin, percent)
        cpuMax = Swift.max(cpuMax, percent)
        self.cpuSeconds += Swift.max(0, cpuSeconds)
        self.wallSeconds += wallSeconds
        let resident = Double(residentBytes)
        residentMin = Swift.min(residentMin, resident)
        residentMax = Swift.max(residentMax, resident)
        residentSum += resident
    }

    /// The summaries, or nil without samples. CPU is in percent of one core (summed over
    /// threads, so above 100 with more than one busy thread); its mean weights each sample
    /// by its span, so it is the CPU time over the sampled wall time. Resident memory is
    /// in bytes; its mean is the plain mean of the samples.
    var usage: ResourceUsage? {
        guard samples > 0 else { return nil }
        return ResourceUsage(
            cpuPercent: .init(min: cpuMin, mean: 100 * cpuSeconds / wallSeconds, max: cpuMax),
            residentBytes: .init(min: residentMin, mean: residentSum / Double(samples), max: residentMax),
            samples: samples)
    }
}
