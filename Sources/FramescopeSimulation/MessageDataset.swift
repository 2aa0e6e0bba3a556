import FramescopeCore

/// The message list of the thesis' test app: a generated chat of text and media
/// messages, as its generator script described it.
///
/// Each message has an id (0…n−1) and a direction (`in` or `out`, equal chance). With
/// the media probability (0.25) it is a media message with 1–3 items, each picked from
/// a pool of 100 static and 10 animated image names (duplicates allowed). Otherwise it
/// is a text message with one of three contents of small, medium and large width and
/// height; line breaks set the height.
public struct Message: Sendable, Hashable, Codable {
    /// Which way a message went.
    public enum Direction: String, Sendable, Hashable, Codable {
        /// Received.
        case incoming = "in"
        /// Sent.
        case outgoing = "out"
    }

    /// 0…n−1, in order.
    public var messageId: Int
    /// `in` or `out`.
    public var direction: Direction
    /// The text of a text message; absent in media messages.
    public var message: String?
    /// The image names of a media message; absent in text messages.
    public var mediaItems: [String]?

    /// Creates a message.
    public init(messageId: Int, direction: Direction, message: String? = nil, mediaItems: [String]? = nil) {
        self.messageId = messageId
        self.direction = direction
        self.message = message
        self.mediaItems = mediaItems
    }

    /// Whether an image name is an animated one.
    public static func isAnimated(_ item: String) -> Bool { item.hasSuffix(".gif") }
}

/// Generates the thesis' data set.
public enum MessageDataset {
    /// Number of static (JPEG) image names in the pool.
    public static let staticImageCount = 100
    /// Number of animated (GIF) image names in the pool.
    public static let animatedImageCount = 10

    /// The three text contents, small to large: one short line, three medium lines,
    /// six long lines.
    public static let texts: [String] = [
        "See you soon!",
        "Running a bit late today,\nthe bus broke down again.\nSave me a seat?",
        "I finally finished the long report for the client and sent it over this morning.\nThey asked for two more charts about the scrolling performance of the new build.\nCould you send me the frame-rate figures from Tuesday's measurements?\nI think the old device still drops frames in the message list.\nLet's go through the numbers together after lunch tomorrow.\nThanks again for all your help this week!",
    ]

    /// The pool of image names: `images/static-001.jpg` … `images/static-100.jpg`, then
    /// `images/animated-01.gif` … `images/animated-10.gif`.
    public static let imagePool: [String] = {
        let statics = (1...staticImageCount).map { "images/static-\(pad($0, 3)).jpg" }
        let animated = (1...animatedImageCount).map { "images/animated-\(pad($0, 2)).gif" }
        return statics + animated
    }()

    /// `count` messages generated from `seed`.
    /// - Parameters:
    ///   - count: How many messages (the thesis used 500).
    ///   - mediaProbability: The chance that a message is a media message (0.25).
    ///   - seed: Seeds every draw; the same seed gives the same list.
    public static func generate(count: Int = 500, mediaProbability: Double = 0.25, seed: UInt64 = 1) -> [Message] {
        var random = SeededGenerator(seed: seed).fork(0xDA7A)
        return (0..<max(0, count)).map { id in
            let direction: Message.Direction = random.unit() < 0.5 ? .outgoing : .incoming
            if random.unit() < mediaProbability {
                let items = (0..<Int.random(in: 1...3, using: &random)).map { _ in imagePool.randomElement(using: &random)! }
                return Message(messageId: id, direction: direction, mediaItems: items)
            }
            return Message(messageId: id, direction: direction, message: texts.randomElement(using: &random)!)
        }
    }

    private static func pad(_ value: Int, _ width: Int) -> String { zeroPadded(Int64(value), width: width) }
}
