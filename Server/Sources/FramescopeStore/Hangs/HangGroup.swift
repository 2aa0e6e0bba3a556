import Foundation
import FramescopeCore

/// Hangs with one signature, as a store reads them: how many, how long, where and when,
/// and the stack the group shows (``representative(of:)``, never simply its longest hang's).
public struct HangGroup: Sendable, Hashable {
    /// The signature (``HangSummary/signature``).
    public var signature: String
    /// How many hangs.
    public var hangs: Int
    /// How many of them the process died in.
    public var fatal: Int
    /// Their total length, in seconds.
    public var duration: Double
    /// The screens they happened on, those with the most hangs first, then in byte order (``byHangs(_:)``).
    public var screens: [String]
    /// The app versions they happened in, those with the most hangs first, then in byte order.
    public var appVersions: [String]
    /// When the first began, Unix seconds.
    public var firstSeen: Double
    /// When the last began, Unix seconds.
    public var lastSeen: Double
    /// The dominant app frame (of ``stack``), or `nil` without one.
    public var dominant: HangFrame?
    /// The stack the group shows (``representative(of:)``), innermost first, with its shares.
    public var stack: [HangFrame]

    /// Creates a group.
    public init(signature: String, hangs: Int, fatal: Int, duration: Double, screens: [String], appVersions: [String],
                firstSeen: Double, lastSeen: Double, dominant: HangFrame?, stack: [HangFrame]) {
        self.signature = signature
        self.hangs = hangs
        self.fatal = fatal
        self.duration = duration
        self.screens = screens
        self.appVersions = appVersions
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.dominant = dominant
        self.stack = stack
    }

    /// The frame of `stack` that `signature` names (an app frame at its lookup offset),
    /// or `nil` for a signature that names none (``HangSummary/noStack``, ``HangSummary/noAppFrame``).
    public static func dominant(of signature: String, in stack: [HangFrame]) -> HangFrame? {
        stack.first { $0.app && HangSummary.signature(imageId: $0.imageId, lookupOffset: $0.lookupOffset) == signature }
    }

    /// The stored form of a representative stack (``HangRow/storedStack``).
    private struct StoredStack: Decodable {
        struct Image: Decodable { var name: String; var id: String; var app: Bool }
        struct Frame: Decodable {
            var image: Int, offset: UInt64, lookupOffset: UInt64, share: Double
            init(from decoder: any Decoder) throws {
                var container = try decoder.unkeyedContainer()
                image = try container.decode(Int.self)
                offset = try container.decode(UInt64.self)
                lookupOffset = try container.decode(UInt64.self)
                share = try container.decode(Double.self)
            }
        }
        var images: [Image]
        var frames: [Frame]
    }

    /// A stored representative stack (``HangRow/storedStack``) read back; an unreadable
    /// one (never written by this collector) reads as empty.
    public static func stack(stored text: String) -> [HangFrame] {
        guard let stored = try? JSONDecoder().decode(StoredStack.self, from: Data(text.utf8)) else { return [] }
        return stored.frames.compactMap { frame in
            guard stored.images.indices.contains(frame.image) else { return nil }
            let image = stored.images[frame.image]
            return HangFrame(image: image.name, imageId: image.id, offset: frame.offset, lookupOffset: frame.lookupOffset, app: image.app,
                             share: frame.share)
        }
    }
}
