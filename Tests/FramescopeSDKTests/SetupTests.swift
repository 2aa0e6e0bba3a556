import Foundation
@testable import FramescopeSDK
import Testing

/// The one call, the facts the SDK reads, the installation id and MetricKit's queue, on the
/// machine the tests run on.
@Suite("Setup: facts, installation id, sampling, the one call")
@MainActor
struct SetupTests {
    static func folder() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("framescope-setup-\(UUID().uuidString)")
    }

    /// What a shell command prints, trimmed.
    static func shell(_ command: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    // MARK: Facts

    @Test("On Linux the model is uname -m, the OS os-release's NAME and VERSION_ID, and the processors the process's")
    func linuxFacts() throws {
        let facts = SystemFacts.current()
        #expect(facts.model == (try Self.shell("uname -m")))
        let name = try Self.shell(". /etc/os-release && printf '%s' \"$NAME\"")
        let version = try Self.shell(". /etc/os-release && printf '%s' \"${VERSION_ID:-}\"")
        #expect(facts.osName == (name.isEmpty ? "Linux" : name))
        #expect(facts.osVersion == (version.isEmpty ? (try Self.shell("uname -r")) : version))
        #expect(facts.maxRefreshRate == nil)
        #expect(facts.processorCount == ProcessInfo.processInfo.activeProcessorCount)
        let device = DeviceInfo.current(facts: facts)
        #expect(device.maxRefreshRate == SystemFacts.defaultRefreshRate)
        #expect(device.model == facts.model && device.osName == facts.osName && device.installationId == nil)
    }

    @Test("os-release: quotes, escapes, comments and junk lines")
    func osRelease() {
        let text = """
        # a comment
        NAME="Debian GNU/Linux"
        VERSION_ID='12'
        PRETTY_NAME="Say \\"hi\\" \\\\ there"
        ID=debian
        not a field
        =nokey
        BAD-KEY=x
        EMPTY=
        """
        let fields = OSRelease.fields(in: text)
        #expect(fields["NAME"] == "Debian GNU/Linux")
        #expect(fields["VERSION_ID"] == "12")
        #expect(fields["PRETTY_NAME"] == "Say \"hi\" \\ there")
        #expect(fields["ID"] == "debian")
        #expect(fields["BAD-KEY"] == nil && fields[""] == nil)
        let facts = SystemFacts.linux(osRelease: text, machine: "aarch64", release: "6.1.0", bundleVersion: " 3.2.0 ",
                                      bundleBuild: nil, processorCount: 0)
        #expect(facts.osName == "Debian GNU/Linux" && facts.osVersion == "12" && facts.model == "aarch64")
        #expect(facts.appVersion == "3.2.0" && facts.appBuild == nil && facts.processorCount == 1)
        let bare = SystemFacts.linux(osRelease: nil, machine: "", release: "6.1.0-18-amd64", bundleVersion: nil,
                                     bundleBuild: "", processorCount: 2)
        #expect(bare.osName == "Linux" && bare.osVersion == "6.1.0-18-amd64" && bare.model == "unknown")
        #expect(SystemFacts.versionText(major: 17, minor: 4, patch: 0) == "17.4")
        #expect(SystemFacts.versionText(major: 17, minor: 4, patch: 1) == "17.4.1")
    }

    @Test("Each value the app passes wins over what is read")
    func explicitWins() {
        let facts = SystemFacts(appVersion: "1.0", appBuild: "7", model: "iPhone16,1", osName: "iOS", osVersion: "17.4",
                                maxRefreshRate: 120, processorCount: 6)
        #expect(AppInfo.current(facts: facts) == AppInfo(id: nil, version: "1.0", build: "7"))
        #expect(AppInfo.current(id: "shop", build: "8", facts: facts) == AppInfo(id: "shop", version: "1.0", build: "8"))
        let none = SystemFacts(appVersion: nil, appBuild: nil, model: "m", osName: "o", osVersion: "v", maxRefreshRate: nil,
                               processorCount: 1)
        #expect(AppInfo.current(facts: none) == AppInfo(version: "unknown", build: "unknown"))
        #expect(DeviceInfo.current(facts: facts) == DeviceInfo(model: "iPhone16,1", osName: "iOS", osVersion: "17.4", maxRefreshRate: 120))
        #expect(DeviceInfo.current(model: "iPad14,1", maxRefreshRate: 60, installationId: "mine", facts: facts)
                == DeviceInfo(model: "iPad14,1", osName: "iOS", osVersion: "17.4", maxRefreshRate: 60, installationId: "mine"))
    }

    // MARK: Installation id

    @Test("The installation id is made once, kept across loads, replaced when damaged and new after the folder is removed")
    func installationID() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let first = try InstallationID.load(in: folder)
        #expect(InstallationID.isValid(first) && first.count == 36 && first == first.lowercased())
        #expect(try InstallationID.load(in: folder) == first)
        #expect(String(decoding: try Data(contentsOf: folder.appendingPathComponent("installation-id")), as: UTF8.self) == first)
        try Data("not valid!\n".utf8).write(to: folder.appendingPathComponent("installation-id"))
        let replaced = try InstallationID.load(in: folder)
        #expect(replaced != first && InstallationID.isValid(replaced))
        try FileManager.default.removeItem(at: folder)
        let fresh = try InstallationID.load(in: folder)
        #expect(fresh != replaced && fresh != first)
        #expect(!InstallationID.isValid("") && !InstallationID.isValid(String(repeating: "a", count: 65))
                && !InstallationID.isValid("é") && InstallationID.isValid("a-B_9"))
    }

    @Test("Two SDKs on one folder send one installation id; an explicit one wins; sampling follows the id")
    func sdkInstallation() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        func make(_ device: DeviceInfo? = nil, rate: Double = 1) throws -> Framescope {
            try Framescope(configuration: .init(collector: URL(string: "http://127.0.0.1:9")!, ingestKey: "fsi_test",
                                                device: device, sampleRate: rate, watchdog: WatchdogConfiguration(isEnabled: false),
                                                resourceSampleInterval: nil, delivery: DeliveryConfiguration(directory: folder)))
        }
        let first = try make()
        let id = try #require(first.device.installationId)
        #expect(try make().device.installationId == id)
        #expect(first.app.id == nil && first.app.version == (SystemFacts.current().appVersion ?? "unknown"))
        #expect(first.device.model == SystemFacts.current().model)
        #expect(first.isSampled)
        let point = InstallationSampling.point(of: id)
        #expect(try make(rate: min(1, point + 0.01)).isSampled)
        #expect(try !make(rate: max(0, point - 0.01)).isSampled)
        let given = DeviceInfo(model: "m", osName: "o", osVersion: "1", maxRefreshRate: 90, installationId: "given")
        let explicit = try make(given)
        #expect(explicit.device == given)
        explicit.displayRefreshRate(120)
        #expect(explicit.device.maxRefreshRate == 90)   // the configuration's rate stays
        first.displayRefreshRate(120)
        #expect(first.device.maxRefreshRate == 120)
        first.displayRefreshRate(5000)
        #expect(first.device.maxRefreshRate == 120)
        #expect(throws: Framescope.SetupError.self) { try make(rate: 1.5) }
    }

    @Test("The one call: configured from the collector and key, started, kept in shared, once; stop lets it go")
    func oneCall() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let collector = URL(string: "http://127.0.0.1:9")!
        let framescope = try Framescope.start(collector: collector, ingestKey: "fsi_one") { setup in
            setup.configuration.delivery.directory = folder
            setup.configuration.watchdog.isEnabled = false
            setup.configuration.sampleRate = 1
        }
        #expect(Framescope.shared === framescope)
        #expect(framescope.configuration.collector == collector && framescope.configuration.ingestKey == "fsi_one")
        #expect(framescope.app.id == nil && framescope.device.installationId != nil)
        #expect(framescope.directory == folder && framescope.metricKit != nil)
        // Started: a screen is measured (the tracker has it).
        framescope.screen("Feed")
        #expect(framescope.tracker.pointee.screen == "Feed")
        let again = try Framescope.start(collector: URL(string: "http://other:1")!, ingestKey: "fsi_other")
        #expect(again === framescope)
        await framescope.stop()
        #expect(Framescope.shared == nil)
        #expect(throws: Framescope.SetupError.self) {
            try Framescope.start(collector: URL(string: "ftp://x")!, ingestKey: "k") { $0.configuration.delivery.directory = folder }
        }
        #expect(Framescope.shared == nil)
    }

    @Test("A batch's body carries the sample rate and, without an app id, no id")
    func batchEnvelope() throws {
        let encoder = JSONEncoder()
        let app = Array(try encoder.encode(AppInfo(version: "3.2.0", build: "320")))
        let device = Array(try encoder.encode(DeviceInfo(model: "m", osName: "o", osVersion: "1", maxRefreshRate: 60)))
        for rate in [0.25, 1e-05, 1] {
            let body = DeliveryQueue.body(batchId: "b1", app: app, device: device, sampleRate: rate, events: [])
            let batch = try JSONDecoder().decode(EventBatch.self, from: Data(body))
            #expect(batch.sampleRate == rate && batch.app.id == nil && batch.app.version == "3.2.0")
        }
        let without = DeliveryQueue.body(batchId: "b1", app: app, device: device, events: [])
        #expect(try JSONDecoder().decode(EventBatch.self, from: Data(without)).sampleRate == nil)
        #expect(!String(decoding: app, as: UTF8.self).contains("\"id\""))
    }

    // MARK: MetricKit's queue

    @Test("MetricKit payloads: on disk at once, oldest first, bounded, refused when empty or too large")
    func metricKitQueue() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let forwarder = try MetricKitForwarder(directory: folder, collector: URL(string: "http://127.0.0.1:9")!,
                                               ingestKey: "fsi_x", configuration: DeliveryConfiguration(maximumBatchBytes: 1024,
                                                                                                         maximumQueueBytes: 3000))
        for index in 0..<5 {
            try forwarder.enqueue(Data(repeating: UInt8(ascii: "a") + UInt8(index), count: 1000))
        }
        let entries = MetricKitForwarder.entries(in: forwarder.folder)
        // 5,000 bytes into 3,000: the two oldest went.
        #expect(entries.count == 3)
        #expect(entries.map { try! Data(contentsOf: $0.url).first! } == [UInt8(ascii: "c"), UInt8(ascii: "d"), UInt8(ascii: "e")])
        #expect(entries.allSatisfy { $0.attempts == 0 && $0.bytes == 1000 })
        #expect(throws: MetricKitForwarder.Failure.self) { try forwarder.enqueue(Data()) }
        #expect(throws: MetricKitForwarder.Failure.self) {
            try forwarder.enqueue(Data(count: MetricKitForwarder.maximumPayloadBytes + 1))
        }
        #expect(MetricKitForwarder.name(stamp: 42, random: 0xbeef, attempts: 3) == "0000000000000042-0000beef.3.json")
        try Data("x".utf8).write(to: forwarder.folder.appendingPathComponent("notes.txt"))
        #expect(MetricKitForwarder.entries(in: forwarder.folder).count == 3)
    }
}
