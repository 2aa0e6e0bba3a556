import FramescopeCore
import Testing
@testable import FramescopeSDK

/// The idle rule on made-up images: a wait function in a system-call image, called from the
/// run loop's image, is idle; the same wait called from anywhere else is a hang.
@Suite("Idle classifier")
struct IdleClassifierTests {
    static func image(_ name: String, base: UInt64) -> ImageTable.Image {
        ImageTable.Image(id: String(repeating: "ab", count: 20), path: "/lib/\(name)", base: base, size: 0x10_0000,
                         text: [base..<base + 0x10_0000], isApp: false, omitsFramePointers: false)
    }

    static let table = ImageTable(images: [
        image("libc.so.6", base: 0x1000_0000),
        image("libFoundation.so", base: 0x2000_0000),
        image("App", base: 0x3000_0000),
        image("libsystem_kernel.dylib", base: 0x4000_0000),
        image("CoreFoundation", base: 0x5000_0000),
    ])

    /// Names 0x…_0100 of any image `epoll_wait`/`mach_msg2_trap`, 0x…_0200 `read`.
    static let classifier = IdleClassifier { address in
        switch (address >> 28, address & 0xFFFF) {
        case (1, 0x100): "epoll_wait"
        case (4, 0x100): "mach_msg2_trap"
        case (_, 0x200): "read"
        default: nil
        }
    }

    @Test("epoll_wait under CoreFoundation (Linux) and mach_msg2_trap under CoreFoundation (Apple) are idle")
    func idle() {
        #expect(Self.classifier.isIdle([0x1000_0100, 0x2000_5000, 0x2000_6000, 0x3000_1000], images: Self.table))
        // System-call frames between the wait and the run loop are skipped.
        #expect(Self.classifier.isIdle([0x4000_0100, 0x4000_0900, 0x4000_0a00, 0x5000_1000, 0x3000_1000],
                                       images: Self.table))
    }

    @Test("A wait called by the app, a read, an app frame on top, an unknown address or an empty sample is no idle")
    func notIdle() {
        #expect(!Self.classifier.isIdle([0x1000_0100, 0x3000_1000, 0x2000_5000], images: Self.table))
        #expect(!Self.classifier.isIdle([0x1000_0200, 0x2000_5000], images: Self.table))
        #expect(!Self.classifier.isIdle([0x3000_0100, 0x2000_5000], images: Self.table))
        #expect(!Self.classifier.isIdle([0x1000_0100, 0x9000_0000, 0x2000_5000], images: Self.table))
        #expect(!Self.classifier.isIdle([0x1000_0100], images: Self.table))
        #expect(!Self.classifier.isIdle([UInt64](), images: Self.table))
    }
}
