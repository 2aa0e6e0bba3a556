/// The main thread's stack, sampled while one hang lasted: the images its frames lie in,
/// the distinct frames, and the samples as lists of frames (innermost first).
///
/// A frame is an (image, offset) pair, never an address, so that stacks from devices with
/// different load addresses (ASLR) compare equal. For a Mach-O image the offset is counted
/// from its header (MetricKit's `offsetIntoBinaryTextSegment`); for an ELF image from its
/// load bias, which makes it the file's own virtual address, as its symbol table counts.
/// The first frame of a sample is the interrupted instruction; the others are return
/// addresses, which a symbolicator looks up one byte earlier (``Frame/lookupOffset(isFirst:)``).
///
/// On the wire (an optional member `stack` of a hang, version 1):
///
/// ```json
/// {"images": [{"id": "73d406b3246a378bbefc16429a4d8133", "name": "Shop", "size": 1048576, "app": true}],
///  "frames": [[0, 8540], [0, 9656]],
///  "samples": [{"at": 0.0, "frames": [0, 1]}, {"at": 0.1, "frames": [0, 1]}]}
/// ```
public struct HangStack: Sendable, Hashable, Codable {
    /// A loaded image (executable, framework or shared library) some frame lies in.
    public struct Image: Sendable, Hashable, Codable {
        /// The image's build identity in lowercase hex without separators: a Mach-O
        /// `LC_UUID` (32 digits) or an ELF GNU build id (16 to 64 digits, even).
        public var id: String
        /// The image's file name without its folder (`Shop`, `libswiftCore.so`).
        public var name: String
        /// The image's extent in memory, in bytes from the point offsets count from; every
        /// frame's offset in it is below this.
        public var size: UInt64
        /// Whether the image is the app's own code (its executable or a framework in its
        /// bundle), not the system's or Framescope's.
        public var app: Bool

        /// Creates an image.
        public init(id: String, name: String, size: UInt64, app: Bool) {
            self.id = id
            self.name = name
            self.size = size
            self.app = app
        }
    }

    /// A code location: an image, by its index in ``HangStack/images``, and a byte offset in it.
    /// On the wire, the two-element array `[image, offset]`.
    public struct Frame: Sendable, Hashable, Codable {
        /// The index of the image in ``HangStack/images``.
        public var image: Int
        /// Bytes from the image's base to the instruction (the first frame) or return address.
        public var offset: UInt64

        /// Creates a frame.
        public init(image: Int, offset: UInt64) {
            self.image = image
            self.offset = offset
        }

        /// The offset a symbol table should look up: return addresses point after their call,
        /// so every frame but a sample's first is looked up one byte earlier.
        /// - Parameter isFirst: whether the frame is the interrupted instruction.
        public func lookupOffset(isFirst: Bool) -> UInt64 {
            isFirst || offset == 0 ? offset : offset - 1
        }

        /// Decodes `[image, offset]`.
        public init(from decoder: any Decoder) throws {
            var container = try decoder.unkeyedContainer()
            image = try container.decode(Int.self)
            offset = try container.decode(UInt64.self)
            guard container.isAtEnd else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "a frame is [image, offset]")
            }
        }

        /// Encodes `[image, offset]`.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.unkeyedContainer()
            try container.encode(image)
            try container.encode(offset)
        }
    }

    /// One look at the stack.
    public struct Sample: Sendable, Hashable, Codable {
        /// Seconds from the hang's start to the sample.
        public var at: Double
        /// The stack, innermost first, as indices into ``HangStack/frames``.
        public var frames: [Int]

        /// Creates a sample.
        public init(at: Double, frames: [Int]) {
            self.at = at
            self.frames = frames
        }
    }

    /// The images the frames lie in.
    public var images: [Image]
    /// The distinct frames, each once.
    public var frames: [Frame]
    /// The samples, oldest first.
    public var samples: [Sample]

    /// Creates a stack.
    public init(images: [Image], frames: [Frame], samples: [Sample]) {
        self.images = images
        self.frames = frames
        self.samples = samples
    }

    /// Most images in one hang's stack.
    public static let maximumImages = 64
    /// Most distinct frames in one hang's stack.
    public static let maximumFrames = 2_560
    /// Most samples of one hang.
    public static let maximumSamples = 50
    /// Most frames in one sample.
    public static let maximumDepth = 256
    /// Longest image name, in bytes of UTF-8.
    public static let maximumImageNameLength = 128
    /// Largest image extent, in bytes (4 GiB).
    public static let maximumImageSize: UInt64 = 1 << 32
    /// Most hangs with a stack in one screen visit (the collector's default limit); an SDK
    /// keeps the stacks of the longest hangs and sends the others without.
    public static let maximumStackedHangsPerVisit = 32
}
