import FramescopeCore
import Testing

@Suite("Sampling per installation")
struct InstallationSamplingTests {
    /// Ids as the SDK makes them (lowercased UUIDs), from a fixed generator.
    static func ids(_ count: Int, seed: UInt64) -> [String] {
        var state = seed
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        return (0..<count).map { _ in
            let a = next(), b = next()
            let hex = String(a, radix: 16) + String(b, radix: 16)
            let padded = String(repeating: "0", count: max(0, 32 - hex.count)) + hex
            let c = Array(padded.prefix(32))
            return "\(String(c[0..<8]))-\(String(c[8..<12]))-4\(String(c[13..<16]))-\(String(c[16..<20]))-\(String(c[20..<32]))"
        }
    }

    @Test("The same id decides the same way every time, and a fixed id has a fixed point")
    func stable() {
        let id = "3f2504e0-4f89-41d3-9a0c-0305e82c3301"
        let point = InstallationSampling.point(of: id)
        for _ in 0..<100 { #expect(InstallationSampling.point(of: id) == point) }
        #expect((0..<1).contains(point))
        // Pinned: the hash is part of the format (an installation must not move between
        // versions of the SDK). FNV-1a 64 of the id's bytes, then SplitMix64's finaliser.
        #expect(InstallationSampling.point(of: "") == InstallationSampling.point(of: ""))
        #expect(InstallationSampling.point(of: "a") != InstallationSampling.point(of: "b"))
        #expect(InstallationSampling.point(of: id) == Self.reference(id))
        // Literal values (computed by a Python script of the same hash), so a change to the
        // hash cannot pass by changing the reference with it.
        #expect(InstallationSampling.point(of: id) == 0.4663077359264004)
        #expect(InstallationSampling.point(of: "example-1") == 0.528050510269306)
        #expect(InstallationSampling.point(of: "") == 0.9576734252420561)
    }

    /// The hash written out plainly, the way another implementation (a server, a script)
    /// would, to pin it.
    static func reference(_ id: String) -> Double {
        var h: UInt64 = 14_695_981_039_346_656_037
        for b in Array(id.utf8) { h = (h ^ UInt64(b)) &* 1_099_511_628_211 }
        h = (h ^ (h >> 30)) &* 13_787_848_793_156_543_929
        h = (h ^ (h >> 27)) &* 10_723_151_780_598_845_931
        h = h ^ (h >> 31)
        return Double(h >> 11) * 0x1p-53
    }

    @Test("Rates 0 and 1 and clamping")
    func edges() {
        for id in Self.ids(200, seed: 1) {
            #expect(InstallationSampling.includes(id, rate: 1))
            #expect(InstallationSampling.includes(id, rate: 7))
            #expect(!InstallationSampling.includes(id, rate: 0))
            #expect(!InstallationSampling.includes(id, rate: -1))
        }
    }

    @Test("Over 100,000 ids each rate keeps its share within 0.5 percentage points, and a higher rate keeps every id a lower one kept",
          arguments: [0.01, 0.1, 0.25, 0.5, 0.9])
    func share(rate: Double) {
        let ids = Self.ids(100_000, seed: 42)
        let kept = ids.filter { InstallationSampling.includes($0, rate: rate) }
        let share = Double(kept.count) / Double(ids.count)
        // Binomial standard deviation at 0.5 is 0.0016; 0.005 is over 3 of them.
        #expect(abs(share - rate) < 0.005, "share \(share) at rate \(rate)")
        let higher = min(1, rate * 2)
        #expect(kept.allSatisfy { InstallationSampling.includes($0, rate: higher) })
    }

    @Test("Ids differing in one character land far apart (no clustering of similar ids)")
    func spread() {
        let base = "example-"
        let points = (0..<1000).map { InstallationSampling.point(of: base + String($0)) }
        let tenths = Dictionary(grouping: points) { Int($0 * 10) }.mapValues(\.count)
        #expect(tenths.count == 10)
        #expect(tenths.values.allSatisfy { (60...140).contains($0) }, "\(tenths)")
    }
}
