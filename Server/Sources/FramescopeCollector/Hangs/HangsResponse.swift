import FramescopeCore
import Hummingbird

/// `GET /v1/apps/{app}/hangs`: the app's hangs grouped by where they happened, by total
/// hang time (longest first): the SDK's (``groups``) and MetricKit's (``metricKitGroups``),
/// and the images whose frames have no symbols uploaded.
public struct HangsResponse: ResponseEncodable, Codable, Sendable {
    /// One frame of a group's stack.
    public struct Frame: Codable, Sendable, Hashable {
        /// The image's file name.
        public var image: String
        /// The image's build identity (lowercase hex: a UUID or a build id).
        public var imageId: String
        /// Bytes from the image's base to the instruction or return address.
        public var offset: UInt64
        /// The function the frame is in (`specialized trash(paths:)`), or `nil` where no
        /// symbols of the image were uploaded or none covers the offset.
        public var symbol: String?
        /// The share of the longest hang's samples in which the frame appears, 0 to 1.
        public var share: Double
        /// Whether the image is the app's own code.
        public var app: Bool

        enum CodingKeys: String, CodingKey { case image, imageId, offset, symbol, share, app }

        /// Encodes every member, `symbol` as `null` when there is none.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(image, forKey: .image)
            try container.encode(imageId, forKey: .imageId)
            try container.encode(offset, forKey: .offset)
            try container.encode(symbol, forKey: .symbol)
            try container.encode(share, forKey: .share)
            try container.encode(app, forKey: .app)
        }
    }

    /// Hangs with one signature.
    public struct Group: Codable, Sendable, Hashable {
        /// `` <image>`<function> `` of the dominant app frame where its image's symbols were
        /// uploaded, else `<image id>+0x<offset>`; `(no app frame)` or `(no stack)`.
        public var signature: String
        /// How many hangs.
        public var hangs: Int
        /// How many the process died in.
        public var fatal: Int
        /// Total hang time, in seconds.
        public var duration: Double
        /// The screens they happened on, in byte order.
        public var screens: [String]
        /// The app versions they happened in, in byte order.
        public var appVersions: [String]
        /// When the first began, ISO 8601 in UTC.
        public var firstSeen: String
        /// When the last began, ISO 8601 in UTC.
        public var lastSeen: String
        /// The dominant app frame, or `nil` without one.
        public var dominant: Frame?
        /// The longest hang's representative stack, innermost first.
        public var stack: [Frame]

        enum CodingKeys: String, CodingKey { case signature, hangs, fatal, duration, screens, appVersions, firstSeen, lastSeen, dominant, stack }

        /// Encodes every member, `dominant` as `null` when there is none.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(signature, forKey: .signature)
            try container.encode(hangs, forKey: .hangs)
            try container.encode(fatal, forKey: .fatal)
            try container.encode(duration, forKey: .duration)
            try container.encode(screens, forKey: .screens)
            try container.encode(appVersions, forKey: .appVersions)
            try container.encode(firstSeen, forKey: .firstSeen)
            try container.encode(lastSeen, forKey: .lastSeen)
            try container.encode(dominant, forKey: .dominant)
            try container.encode(stack, forKey: .stack)
        }
    }

    /// An image some frame lies in, without symbols.
    public struct Image: Codable, Sendable, Hashable {
        /// Its file name.
        public var name: String
        /// Its build identity.
        public var id: String
    }

    /// The SDK's hangs (visits' and fatal ones), grouped.
    public var groups: [Group]
    /// MetricKit's hang diagnostics, grouped the same way (no screens; never fatal).
    public var metricKitGroups: [Group]
    /// The app's images in the groups' stacks with no symbols uploaded, by name: upload
    /// theirs (`framescope symbols upload`) to see functions.
    public var imagesWithoutSymbols: [Image]

    /// Groups per source unless `limit` says otherwise.
    public static let defaultLimit = 100
    /// Most groups per source.
    public static let maximumLimit = 1000

    /// The answer for `sdk` and `metricKit` groups as the store read them (at most
    /// ``maximumLimit`` each), merged by function where `tables` (symbol tables by image
    /// id) name their dominant frames (``HangGroup/merged(_:tables:)``), at most `limit` each.
    public init(sdk: [HangGroup], metricKit: [HangGroup], tables: [String: SymbolTableBlob] = [:], limit: Int = maximumLimit) {
        groups = HangGroup.merged(sdk, tables: tables).prefix(limit).map { Self.group($0, tables) }
        metricKitGroups = HangGroup.merged(metricKit, tables: tables).prefix(limit).map { Self.group($0, tables) }
        var images: [String: String] = [:]
        for group in groups + metricKitGroups {
            for frame in group.stack where frame.app && tables[frame.imageId] == nil { images[frame.imageId] = frame.image }
        }
        imagesWithoutSymbols = images.map { Image(name: $0.value, id: $0.key) }
            .sorted { (StoredText($0.name), $0.id) < (StoredText($1.name), $1.id) }
    }

    static func frame(_ frame: HangFrame, _ tables: [String: SymbolTableBlob]) -> Frame {
        Frame(image: frame.image, imageId: frame.imageId, offset: frame.offset, symbol: tables[frame.imageId]?.name(at: frame.lookupOffset),
              share: frame.share, app: frame.app)
    }

    static func group(_ group: HangGroup, _ tables: [String: SymbolTableBlob]) -> Group {
        // MetricKit's hangs name no screen: their empty screen is no screen to list.
        Group(signature: group.signature, hangs: group.hangs, fatal: group.fatal, duration: group.duration,
              screens: group.screens.filter { !$0.isEmpty },
              appVersions: group.appVersions, firstSeen: ISO8601.format(unixSeconds: group.firstSeen),
              lastSeen: ISO8601.format(unixSeconds: group.lastSeen), dominant: group.dominant.map { Self.frame($0, tables) },
              stack: group.stack.map { Self.frame($0, tables) })
    }
}
