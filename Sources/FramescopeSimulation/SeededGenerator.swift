import FramescopeCore

/// A small, fast random number generator (SplitMix64) whose whole output follows
/// from its seed, so every simulation is reproducible on every platform.
///
/// ```swift
/// var random = SeededGenerator(seed: 1)
/// let x = Double.random(in: 0..<1, using: &random)
/// ```
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) {
        state = seed
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// An independent generator for a sub-stream named by `stream`, so adding draws to
    /// one part of a simulation does not shift the numbers another part sees.
    public func fork(_ stream: UInt64) -> SeededGenerator {
        var copy = SeededGenerator(seed: state ^ (stream &* 0xD1B5_4A32_D192_ED03))
        _ = copy.next()
        return copy
    }

    /// A uniform value in [0, 1).
    public mutating func unit() -> Double {
        Double(next() >> 11) * 0x1p-53
    }

    /// A normally distributed value (Box–Muller).
    public mutating func normal(mean: Double = 0, standardDeviation: Double = 1) -> Double {
        let u1 = max(unit(), 0x1p-53)
        let u2 = unit()
        let radius = (-2 * Elementary.log(u1)).squareRoot()
        return mean + standardDeviation * radius * Elementary.cos(2 * Double.pi * u2)
    }

    /// A log-normal value whose median is `median` and whose log has standard deviation `sigma`.
    public mutating func logNormal(median: Double, sigma: Double) -> Double {
        median * Elementary.exp(normal(standardDeviation: sigma))
    }

    /// An exponentially distributed value with the given mean (the wait between Poisson events).
    public mutating func exponential(mean: Double) -> Double {
        -mean * Elementary.log(max(1 - unit(), 0x1p-53))
    }

    /// `true` with probability `probability`.
    public mutating func chance(_ probability: Double) -> Bool {
        unit() < probability
    }
}
