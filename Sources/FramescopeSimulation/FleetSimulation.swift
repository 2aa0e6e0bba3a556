import FramescopeCore

/// A simulated fleet of devices sending screen visits over weeks: the data behind
/// `framescope serve --demo` and the collector's load generator.
///
/// Devices have models, OS versions and displays (60 Hz, or ProMotion 120 Hz that
/// low-power mode caps at 60 Hz). App versions are released over time, and devices
/// adopt each one after a few days. Screens have their own smoothness profiles. One
/// release makes one screen worse and a later one fixes it. Networks, low-power mode
/// and thermal state vary per visit.
///
/// Reports are real engine reports. For every combination of screen, release effect,
/// display and device speed, the fleet simulates a pool of visits once: a
/// ``SyntheticWorkload`` through the ``PipelineSimulator``, analyzed by the
/// ``FrameAnalyzer``. Each visit of the fleet then draws one report from its pool.
/// Visits are therefore exact reports of simulated frames, not numbers made up to
/// look plausible, and weeks of data take seconds to make. Everything follows from
/// the seed.
public struct FleetSimulation: Sendable {
    /// A screen of the simulated app.
    public struct Screen: Sendable, Hashable {
        /// Its name.
        public var name: String
        /// Per-frame costs on a device of speed 1.
        public var profile: SyntheticWorkload.Profile
        /// Mean seconds between main-thread stalls, or `nil`.
        public var stallInterval: Double?
        /// How often it is visited, relative to the others.
        public var weight: Double
    }

    /// A device model of the fleet.
    public struct DeviceModel: Sendable, Hashable {
        /// The hardware identifier.
        public var model: String
        /// 60, or 120 for ProMotion.
        public var maxRefreshRate: Int
        /// How much longer work takes than on a speed-1 device (0.8 is faster).
        public var slowness: Double
        /// Its share of the fleet.
        public var share: Double
    }

    /// An app release.
    public struct Release: Sendable, Hashable {
        /// The marketing version.
        public var version: String
        /// The build number.
        public var build: String
        /// Days after the simulation's start when it ships.
        public var day: Int
        /// Per-screen factors on main-thread work in motion (1.8 = 80 % more work).
        public var screenFactors: [String: Double]
    }

    /// Seeds every draw.
    public var seed: UInt64
    /// The app id events carry.
    public var appId: String
    /// Unix time in seconds of the first simulated day's midnight (UTC).
    public var start: Double
    /// Number of days.
    public var days: Int
    /// Number of devices.
    public var deviceCount: Int
    /// Mean screen visits per device per day.
    public var visitsPerDeviceDay: Double
    /// The app's screens.
    public var screens: [Screen]
    /// The fleet's device models.
    public var models: [DeviceModel]
    /// The releases, in order.
    public var releases: [Release]
    /// OS versions and their shares.
    public var osVersions: [(version: String, share: Double)]

    /// The demo story: six screens, five device models, three releases. Version 3.1
    /// makes the Feed screen's scrolling work 1.7 times heavier; 3.2 fixes it and does
    /// a little better than 3.0.
    public static func demo(appId: String = "demo", start: Double, days: Int = 28, deviceCount: Int = 120, seed: UInt64 = 1) -> FleetSimulation {
        FleetSimulation(
            seed: seed, appId: appId, start: start, days: days, deviceCount: deviceCount, visitsPerDeviceDay: 6,
            screens: [
                Screen(name: "Feed", profile: Self.demoFeed, stallInterval: 400, weight: 3),
                Screen(name: "Chat", profile: Self.demoChat, stallInterval: nil, weight: 2),
                Screen(name: "Search", profile: Self.demoSearch, stallInterval: 250, weight: 1.2),
                Screen(name: "Profile", profile: .light, stallInterval: nil, weight: 1),
                Screen(name: "Checkout", profile: .light, stallInterval: 150, weight: 0.6),
                Screen(name: "Settings", profile: .light, stallInterval: nil, weight: 0.5),
            ],
            models: [
                DeviceModel(model: "iPhone16,1", maxRefreshRate: 120, slowness: 0.8, share: 0.25),
                DeviceModel(model: "iPhone15,3", maxRefreshRate: 120, slowness: 0.85, share: 0.15),
                DeviceModel(model: "iPhone14,5", maxRefreshRate: 60, slowness: 1.0, share: 0.3),
                DeviceModel(model: "iPhone12,1", maxRefreshRate: 60, slowness: 1.4, share: 0.2),
                DeviceModel(model: "iPhone12,8", maxRefreshRate: 60, slowness: 1.4, share: 0.1),
            ],
            releases: [
                Release(version: "3.0.0", build: "300", day: -30, screenFactors: [:]),
                Release(version: "3.1.0", build: "310", day: days / 3, screenFactors: ["Feed": 1.7]),
                Release(version: "3.2.0", build: "320", day: 2 * days / 3, screenFactors: ["Feed": 0.7]),
            ],
            osVersions: [("17.6", 0.2), ("18.1", 0.5), ("18.2", 0.3)]
        )
    }

    /// The demo's Feed: a scrolling list with occasional heavy cells (a warning-level
    /// hitch ratio on 60 Hz phones, until 3.1 makes its scrolling work heavier).
    public static let demoFeed = SyntheticWorkload.Profile(idleMain: 0.0008, motionMain: 0.0035, render: 0.003, sigma: 0.3,
                                                           spikeProbability: 0.006, spikeMain: 0.018...0.040)
    /// The demo's Chat: light scrolling, rare spikes.
    public static let demoChat = SyntheticWorkload.Profile(idleMain: 0.0008, motionMain: 0.003, render: 0.003, sigma: 0.3,
                                                           spikeProbability: 0.002, spikeMain: 0.015...0.030)
    /// The demo's Search: results with images, the slowest screen.
    public static let demoSearch = SyntheticWorkload.Profile(idleMain: 0.001, motionMain: 0.0045, render: 0.004, sigma: 0.35,
                                                             spikeProbability: 0.007, spikeMain: 0.020...0.050)

    /// Every batch of the fleet: one per device per day with visits, in time order.
    public func batches() -> [EventBatch] {
        var pools = VisitPools(seed: seed)
        var result: [EventBatch] = []
        let devices = makeDevices()
        for day in 0..<days {
            for device in devices {
                var random = SeededGenerator(seed: seed).fork(UInt64(day) &* 1_000_003 &+ UInt64(device.index))
                let visits = poisson(mean: visitsPerDeviceDay * device.activity, &random)
                guard visits > 0 else { continue }
                let release = releaseInUse(day: day, device: device)
                var events: [ScreenVisitEvent] = []
                var clock = start + Double(day) * 86_400 + 7 * 3600 + random.unit() * 14 * 3600
                for _ in 0..<visits {
                    let screen = pickScreen(&random)
                    let lowPower = random.chance(device.lowPowerHabit)
                    let thermal: VisitContext.ThermalState = random.chance(0.04) ? .serious : (random.chance(0.15) ? .fair : .nominal)
                    let network: VisitContext.Network = random.chance(0.05) ? .offline : (random.chance(device.cellularShare) ? .cellular : .wifi)
                    let factor = release.screenFactors[screen.name] ?? 1
                    let slowness = device.model.slowness * (thermal == .serious ? 1.3 : 1)
                    let key = VisitPools.Key(screen: screen.name, workFactor: factor, slownessClass: VisitPools.slownessClass(slowness),
                                             refreshRate: device.model.maxRefreshRate, lowPower: lowPower)
                    var visit = pools.visit(for: key, screen: screen, &random)
                    if let interval = screen.stallInterval {
                        // Stalls are drawn per visit (not pooled), so hangs vary the way they do on real devices.
                        let refresh = lowPower || device.model.maxRefreshRate <= 60 ? 60 : device.model.maxRefreshRate
                        for _ in 0..<poisson(mean: visit.duration / interval, &random) {
                            let length = 0.3 + 0.1 * Double(Int(random.unit() * 4))
                            visit.report.merge(VisitPools.stallReport(length: length, refreshRate: refresh))
                            visit.hangs.append(HangRecord(offset: random.unit() * visit.duration, duration: length))
                            visit.duration += length
                        }
                        visit.hangs.sort { $0.offset < $1.offset }
                    }
                    let memory = 90e6 + 60e6 * random.unit()
                    events.append(ScreenVisitEvent(
                        screen: screen.name, startedAt: ISO8601.format(unixSeconds: clock), duration: visit.duration,
                        context: VisitContext(network: network, lowPowerMode: lowPower, thermalState: thermal),
                        report: visit.report, motion: visit.motion, hangs: visit.hangs,
                        resources: ResourceUsage(
                            cpuPercent: .init(min: 8 * slowness, mean: 22 * slowness * factor, max: 60 * slowness * factor),
                            residentBytes: .init(min: memory, mean: memory * 1.1, max: memory * 1.25),
                            samples: max(1, Int(visit.duration))
                        )
                    ))
                    clock += visit.duration + 5 + random.exponential(mean: 120)
                }
                result.append(EventBatch(
                    batchId: "\(appId)-d\(device.index)-\(day)",
                    app: AppInfo(id: appId, version: release.version, build: release.build),
                    device: DeviceInfo(model: device.model.model, osName: "iOS", osVersion: device.osVersion, maxRefreshRate: device.model.maxRefreshRate,
                                       installationId: "\(appId)-install-\(seed)-\(device.index)"),
                    events: events
                ))
            }
        }
        return result
    }

    struct Device {
        var index: Int
        var model: DeviceModel
        var osVersion: String
        var adoptionDelay: Double
        var activity: Double
        var lowPowerHabit: Double
        var cellularShare: Double
    }

    func makeDevices() -> [Device] {
        var random = SeededGenerator(seed: seed).fork(0xDE71CE)
        return (0..<deviceCount).map { index in
            let model = pick(models.map { ($0, $0.share) }, &random)
            let os = pick(osVersions.map { ($0.version, $0.share) }, &random)
            return Device(index: index, model: model, osVersion: os, adoptionDelay: random.exponential(mean: 2.5),
                          activity: 0.3 + 1.4 * random.unit(), lowPowerHabit: random.chance(0.25) ? 0.6 : 0.05,
                          cellularShare: 0.2 + 0.4 * random.unit())
        }
    }

    func releaseInUse(day: Int, device: Device) -> Release {
        var current = releases[0]
        for release in releases where Double(day) >= Double(release.day) + device.adoptionDelay { current = release }
        return current
    }

    func pickScreen(_ random: inout SeededGenerator) -> Screen {
        pick(screens.map { ($0, $0.weight) }, &random)
    }

    func pick<T>(_ options: [(T, Double)], _ random: inout SeededGenerator) -> T {
        let total = options.reduce(0) { $0 + $1.1 }
        var draw = random.unit() * total
        for (option, weight) in options {
            draw -= weight
            if draw < 0 { return option }
        }
        return options[options.count - 1].0
    }

    func poisson(mean: Double, _ random: inout SeededGenerator) -> Int {
        var count = 0
        var time = random.exponential(mean: 1)
        while time < mean { count += 1; time += random.exponential(mean: 1) }
        return count
    }
}

/// Simulated visits, made once per kind of visit and drawn from afterwards.
struct VisitPools {
    struct Key: Hashable {
        var screen: String
        var workFactor: Double
        var slownessClass: Double
        var refreshRate: Int
        var lowPower: Bool
    }

    struct Visit {
        var duration: Double
        var report: FrameReport
        var motion: FrameReport?
        var hangs: [HangRecord]
    }

    static let visitsPerPool = 24

    /// The report of one frame that took `length` seconds on a display at `refreshRate` Hz:
    /// what a main-thread stall adds to a visit.
    static func stallReport(length: Double, refreshRate: Int) -> FrameReport {
        let refresh = 1 / Double(refreshRate)
        let interval = FrameInterval(previousTimestamp: 0, previousTarget: refresh, timestamp: length)
        var accumulator = FrameAccumulator(configuration: AnalyzerConfiguration(), tracksWindows: false)
        accumulator.record(FrameSample(interval, start: 0, refreshRate: refreshRate), endingAt: length)
        return accumulator.report()
    }
    let seed: UInt64
    var pools: [Key: [Visit]] = [:]

    init(seed: UInt64) { self.seed = seed }

    static func slownessClass(_ slowness: Double) -> Double {
        slowness < 0.9 ? 0.8 : (slowness < 1.2 ? 1.0 : (slowness < 1.6 ? 1.4 : 1.8))
    }

    mutating func visit(for key: Key, screen: FleetSimulation.Screen, _ random: inout SeededGenerator) -> Visit {
        if pools[key] == nil { pools[key] = makePool(key, screen) }
        let pool = pools[key]!
        return pool[Int(random.next() % UInt64(pool.count))]
    }

    private func makePool(_ key: Key, _ screen: FleetSimulation.Screen) -> [Visit] {
        var profile = screen.profile
        profile.idleMain *= key.slownessClass
        profile.motionMain *= key.slownessClass * key.workFactor
        profile.render *= key.slownessClass
        profile.spikeMain = (profile.spikeMain.lowerBound * key.slownessClass * key.workFactor)...(profile.spikeMain.upperBound * key.slownessClass * key.workFactor)
        let display: DisplayMode = key.refreshRate > 60 ? .variable(idleHz: 60, motionHz: Double(key.refreshRate)) : .fixed(hz: 60)
        var keyHash = UInt64(truncatingIfNeeded: key.screen.utf8.reduce(5381) { ($0 << 5) &+ $0 &+ Int($1) })
        keyHash = keyHash &* 31 &+ UInt64(key.workFactor * 1000) &* 7 &+ UInt64(key.slownessClass * 100) &+ UInt64(key.refreshRate) &* 13 &+ (key.lowPower ? 1 : 0)
        return (0..<Self.visitsPerPool).map { index in
            let visitSeed = seed ^ keyHash &* 0x9E37_79B9 &+ UInt64(index)
            let length = 12 + Double(index % 5) * 4
            var workload = SyntheticWorkload(profile: profile, duration: length, idleLength: 1.5, scrollLength: 2.5,
                                             stallInterval: nil, seed: visitSeed)
            let recording = PipelineSimulator(display: display, lowPower: key.lowPower, timestampJitter: 0.03, seed: visitSeed).run(&workload)
            let report = recording.analyze()
            let begin = recording.ticks.first?.timestamp ?? 0
            return Visit(duration: report.whole.duration + report.whole.firstDuration, report: report.whole, motion: report.motion,
                         hangs: recording.groundTruth.hangs.map { HangRecord(offset: $0.start - begin, duration: $0.duration) })
        }
    }
}
