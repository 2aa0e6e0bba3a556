import FramescopeCore

/// `GET /v1/apps/{app}/hangs`: the app's hangs grouped by where they happened, by total
/// hang time (longest first): the SDK's (``groups``) and MetricKit's (``metricKitGroups``),
/// and the images whose frames have no symbols uploaded.
public struct HangsResponse: Codable, Sendable {
    /// One frame of a group's stack.
    public struct Frame: Codable, Sendable, Hashable {
        /// The image's file name: the one its uploaded symbols gave where they were uploaded
        /// (``imageVerified``), else the one the device sent with the stack.
        public var image: String
        /// Whether ``image`` is the name the app's uploaded symbols gave (an admin key's
        /// word); `false`: a device's, which any ingest-key holder can choose, shown as such.
        public var imageVerified: Bool
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

        enum CodingKeys: String, CodingKey { case image, imageVerified, imageId, offset, symbol, share, app }

        /// Encodes every member, `symbol` as `null` when there is none.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(image, forKey: .image)
            try container.encode(imageVerified, forKey: .imageVerified)
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
        /// The screens they happened on, those with the most hangs first (then in byte order),
        /// at most ``HangsResponse/listedValues``.
        public var screens: [String]
        /// How many more screens beyond ``screens``.
        public var moreScreens: Int
        /// The app versions they happened in, those with the most hangs first (then in byte
        /// order), at most ``HangsResponse/listedValues``.
        public var appVersions: [String]
        /// How many more versions beyond ``appVersions``.
        public var moreAppVersions: Int
        /// When the first began, ISO 8601 in UTC.
        public var firstSeen: String
        /// When the last began, ISO 8601 in UTC.
        public var lastSeen: String
        /// The dominant app frame, or `nil` without one.
        public var dominant: Frame?
        /// The stack the group shows, innermost first: of the frame list most of its
        /// longest hangs share (``HangGroup/representative(of:)``).
        public var stack: [Frame]

        enum CodingKeys: String, CodingKey {
            case signature, hangs, fatal, duration, screens, moreScreens, appVersions, moreAppVersions, firstSeen, lastSeen, dominant, stack
        }

        /// Encodes every member, `dominant` as `null` when there is none.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(signature, forKey: .signature)
            try container.encode(hangs, forKey: .hangs)
            try container.encode(fatal, forKey: .fatal)
            try container.encode(duration, forKey: .duration)
            try container.encode(screens, forKey: .screens)
            try container.encode(moreScreens, forKey: .moreScreens)
            try container.encode(appVersions, forKey: .appVersions)
            try container.encode(moreAppVersions, forKey: .moreAppVersions)
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
    /// The app's images in the groups' stacks with no symbols uploaded, by name, at most
    /// ``listedImages``: upload theirs (`framescope symbols upload`) to see functions.
    public var imagesWithoutSymbols: [Image]
    /// How many more such images there are beyond ``imagesWithoutSymbols``.
    public var moreImagesWithoutSymbols: Int

    /// Groups per source unless `limit` says otherwise.
    public static let defaultLimit = 100
    /// Most groups per source.
    public static let maximumLimit = 1000
    /// Most images ``imagesWithoutSymbols`` lists (a stack may name 64 images, so 100 groups
    /// could name 6,400; issue 43 saw a 417 KiB notice of 3,211).
    public static let listedImages = 20
    /// Most screens and versions a group lists (a group's hangs may name 3,000 screens).
    public static let listedValues = 20
    /// How long a hangs read may take, in seconds, before it is cancelled and answered 503
    /// (``CollectorQueries/hangs(app:query:limit:)``): an answer comes before the server's
    /// 30 s idle timeout closes the connection, and on a machine starved enough to pass it
    /// (a test run's parallel suites took 16 s for a one-hang read) a read is not cut short.
    public static let timeLimit = 25.0

    /// The error for a hangs read that took longer than `seconds`: the collector answers it
    /// 503 `store_unavailable` with `Retry-After` (``StoreError/readTookTooLong(what:seconds:)``).
    public static func tookTooLong(seconds: Double) -> StoreError {
        .readTookTooLong(what: "the hangs of this range", seconds: max(1, Int(seconds.rounded(.up))))
    }

    /// The answer for `sdk` and `metricKit` groups as the store read them, merged by
    /// function where `tables` (symbol tables by image id) name their dominant frames
    /// (``HangGroup/merged(_:tables:)``), at most `limit` each. `uploadedNames` (image id →
    /// the name its uploaded symbols gave) names the images it holds; every other image name
    /// is a device's (``Frame/imageVerified`` false).
    public init(sdk: [HangGroup], metricKit: [HangGroup], tables: [String: SymbolTableBlob] = [:], uploadedNames: [String: String] = [:],
                limit: Int = maximumLimit) {
        groups = HangGroup.merged(sdk, tables: tables, names: uploadedNames).prefix(limit).map { Self.group($0, tables, uploadedNames) }
        metricKitGroups = HangGroup.merged(metricKit, tables: tables, names: uploadedNames).prefix(limit).map { Self.group($0, tables, uploadedNames) }
        var images: [String: String] = [:]
        for group in groups + metricKitGroups {
            for frame in group.stack where frame.app && tables[frame.imageId] == nil { images[frame.imageId] = frame.image }
        }
        let all = images.map { Image(name: $0.value, id: $0.key) }
            .sorted { (StoredText($0.name), $0.id) < (StoredText($1.name), $1.id) }
        imagesWithoutSymbols = Array(all.prefix(Self.listedImages))
        moreImagesWithoutSymbols = all.count - imagesWithoutSymbols.count
    }

    static func frame(_ frame: HangFrame, _ tables: [String: SymbolTableBlob], _ uploadedNames: [String: String]) -> Frame {
        let uploaded = uploadedNames[frame.imageId]
        return Frame(image: uploaded ?? frame.image, imageVerified: uploaded != nil, imageId: frame.imageId, offset: frame.offset,
                     symbol: tables[frame.imageId]?.name(at: frame.lookupOffset), share: frame.share, app: frame.app)
    }

    static func group(_ group: HangGroup, _ tables: [String: SymbolTableBlob], _ uploadedNames: [String: String]) -> Group {
        // MetricKit's hangs name no screen: their empty screen is no screen to list.
        let screens = group.screens.filter { !$0.isEmpty }
        return Group(signature: group.signature, hangs: group.hangs, fatal: group.fatal, duration: group.duration,
              screens: Array(screens.prefix(listedValues)), moreScreens: max(0, screens.count - listedValues),
              appVersions: Array(group.appVersions.prefix(listedValues)), moreAppVersions: max(0, group.appVersions.count - listedValues), firstSeen: ISO8601.format(unixSeconds: group.firstSeen),
              lastSeen: ISO8601.format(unixSeconds: group.lastSeen), dominant: group.dominant.map { Self.frame($0, tables, uploadedNames) },
              stack: group.stack.map { Self.frame($0, tables, uploadedNames) })
    }
}
