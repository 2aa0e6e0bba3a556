import FramescopeCore
import FramescopeTraces

/// One MetricKit payload as the collector stores it: Apple's figures that Framescope
/// compares with the SDK's, and who sent it (the same dimensions as the SDK's events).
public struct MetricKitRecord: Sendable, Hashable, Codable {
    /// The request body's SHA-256 (hex) and the payload's position in it: a device that
    /// sends the same body again is not counted twice.
    public var digest: String
    /// When the collector received it, Unix seconds.
    public var receivedAt: Double
    /// `timeStampBegin`, Unix seconds, when the payload has one.
    public var begin: Double?
    /// `timeStampEnd`, Unix seconds (the receipt time when the payload has none): the time
    /// range of a query picks payloads by it.
    public var end: Double
    /// The app version (empty when the payload names none).
    public var appVersion: String
    /// `osVersion` as Apple writes it (empty when none).
    public var osVersion: String
    /// `deviceType`, the model identifier (empty when none).
    public var deviceModel: String
    /// `animationMetrics.scrollHitchTimeRatio`, ms per s.
    public var scrollHitchTimeRatio: Double?
    /// Hang diagnostics in the payload.
    public var hangDiagnostics: Int
    /// Their durations together, in seconds.
    public var hangTime: Double
    /// The longest of them, in seconds (0 without any).
    public var longestHang: Double
    /// Hangs counted by the hang-time histogram, all buckets together.
    public var histogramHangs: Int
    /// The hang diagnostics that came with a call stack, summarised (stored as hang rows of
    /// source `metrickit` beside the record; not part of its coded form).
    public var hangs: [MetricKitHang] = []

    private enum CodingKeys: String, CodingKey {
        case digest, receivedAt, begin, end, appVersion, osVersion, deviceModel, scrollHitchTimeRatio, hangDiagnostics,
             hangTime, longestHang, histogramHangs
    }

    /// The record's texts that are dimensions, each with its ``QueryDimension``: what the
    /// stores pass through the cardinality gate, as they pass an event's (an empty text
    /// names nothing and is not counted).
    public static var gatedDimensions: [(QueryDimension, WritableKeyPath<MetricKitRecord, String>)] {
        [(.appVersion, \.appVersion), (.osVersion, \.osVersion), (.deviceModel, \.deviceModel)]
    }

    /// The record's hangs as the stores keep them (``HangRow``), under its dimension values
    /// as admitted: no screen (MetricKit names none), its app version, OS version and device
    /// model, low-power mode off and the other dimensions `unknown`; dated at the payload's
    /// beginning (MetricKit dates no single hang); keyed `<digest>/<diagnostic index>`.
    public var hangRows: [HangRow] {
        let values = QueryDimension.all.map { dimension -> String in
            switch dimension {
            case .screen: ""
            case .appVersion: appVersion
            case .osVersion: osVersion
            case .deviceModel: deviceModel
            case .lowPower: "false"
            default: QueryDimension.unknownValue
            }
        }
        return hangs.map { hang in
            HangRow(key: "\(digest)/\(hang.diagnostic)", startedAt: begin ?? end, dimensionValues: values, tags: [:],
                    duration: hang.duration, fatal: false, source: .metrickit, summary: hang.summary)
        }
    }

    /// Images MetricKit names that are the system's, not the app's (an image whose symbols
    /// the app uploaded is the app's whatever its name); besides these, every `libsystem_…`
    /// and `libswift…` library.
    public static let systemImageNames: Set<String> = [
        "UIKitCore", "UIKit", "CoreFoundation", "Foundation", "GraphicsServices", "dyld", "libdyld.dylib", "libdispatch.dylib",
        "libobjc.A.dylib", "QuartzCore", "CoreGraphics", "SwiftUI", "SwiftUICore", "CFNetwork", "WebKit", "JavaScriptCore",
        "AttributeGraph", "CoreText", "UIFoundation", "BackBoardServices", "FrontBoardServices", "RunningBoardServices",
        "CoreData", "Security", "libc++.1.dylib", "libc++abi.dylib", "MetricKit", "AVFAudio", "CoreAnimation", "IOKit",
    ]

    /// Whether an image MetricKit names is the app's: its symbols were uploaded, or its
    /// name is none of the system's.
    public static func isAppImage(name: String, id: String, uploaded: Set<String>) -> Bool {
        uploaded.contains(id) || !(systemImageNames.contains(name) || name.hasPrefix("libsystem_") || name.hasPrefix("libswift"))
    }

    /// Creates a record.
    public init(digest: String, receivedAt: Double, begin: Double?, end: Double, appVersion: String, osVersion: String,
                deviceModel: String, scrollHitchTimeRatio: Double?, hangDiagnostics: Int, hangTime: Double,
                longestHang: Double, histogramHangs: Int) {
        self.digest = digest
        self.receivedAt = receivedAt
        self.begin = begin
        self.end = end
        self.appVersion = appVersion
        self.osVersion = osVersion
        self.deviceModel = deviceModel
        self.scrollHitchTimeRatio = scrollHitchTimeRatio
        self.hangDiagnostics = hangDiagnostics
        self.hangTime = hangTime
        self.longestHang = longestHang
        self.histogramHangs = histogramHangs
    }
}

/// Apple's figures for one app version over a query's range and filters, from the
/// MetricKit payloads stored (`GET /v1/apps/{app}/metrickit`, the dashboard's overview).
public struct MetricKitVersionSummary: Sendable, Hashable, Codable {
    /// The app version (empty for payloads that named none).
    public var appVersion: String
    /// Payloads with figures.
    public var payloads: Int
    /// Of them, those with a scroll hitch time ratio.
    public var scrollHitchTimeRatioPayloads: Int
    /// The mean of those payloads' `scrollHitchTimeRatio`, ms per s (Apple gives one ratio
    /// per device and day, without the scrolling time it covers, so each counts once).
    public var scrollHitchTimeRatio: Double?
    /// Hang diagnostics, all payloads together.
    public var hangDiagnostics: Int
    /// Their durations together, in seconds.
    public var hangTime: Double
    /// The longest, in seconds.
    public var longestHang: Double
    /// Hangs counted by the payloads' hang-time histograms.
    public var histogramHangs: Int

    /// Creates a summary.
    public init(appVersion: String, payloads: Int, scrollHitchTimeRatioPayloads: Int, scrollHitchTimeRatio: Double?,
                hangDiagnostics: Int, hangTime: Double, longestHang: Double, histogramHangs: Int) {
        self.appVersion = appVersion
        self.payloads = payloads
        self.scrollHitchTimeRatioPayloads = scrollHitchTimeRatioPayloads
        self.scrollHitchTimeRatio = scrollHitchTimeRatio
        self.hangDiagnostics = hangDiagnostics
        self.hangTime = hangTime
        self.longestHang = longestHang
        self.histogramHangs = histogramHangs
    }

    /// A total of counts (summed as a `Double`, so that no sum overflows) as a count: at
    /// least 0, at most `Int.max`.
    public static func clampedCount(_ total: Double) -> Int {
        total < 9.2e18 ? Int(max(total, 0)) : Int.max
    }
}

/// The answer to `POST /v1/metrickit` (202).
public struct MetricKitResponse: Sendable, Hashable, Codable {
    /// Payloads stored now.
    public var accepted: Int
    /// Payloads of a body received before, not counted again.
    public var duplicates: Int
    /// Payloads without a hitch ratio, hang histogram or hang diagnostic (a day of crashes
    /// alone): read, nothing to store.
    public var withoutFigures: Int
    /// Payloads refused whole, with the field at fault (`index` is the payload's position).
    public var rejected: [RejectedEvent]
    /// Values left out of payloads that were stored, with the field at fault.
    public var skipped: [RejectedEvent]

    /// A value with every field given.
    public init(accepted: Int, duplicates: Int, withoutFigures: Int, rejected: [RejectedEvent], skipped: [RejectedEvent]) {
        self.accepted = accepted
        self.duplicates = duplicates
        self.withoutFigures = withoutFigures
        self.rejected = rejected
        self.skipped = skipped
    }
}

/// One MetricKit hang diagnostic with a call stack, as the collector keeps it.
public struct MetricKitHang: Sendable, Hashable {
    /// Its position among the payload's hang diagnostics.
    public var diagnostic: Int
    /// `hangDuration`, in seconds.
    public var duration: Double
    /// Its signature and representative stack, from the thread-attributed call-stack tree.
    public var summary: HangSummary

    /// A hang diagnostic.
    public init(diagnostic: Int, duration: Double, summary: HangSummary) {
        self.diagnostic = diagnostic
        self.duration = duration
        self.summary = summary
    }
}
