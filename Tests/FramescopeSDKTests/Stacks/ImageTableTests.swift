import FramescopeCore
import Testing
@testable import FramescopeSDK

/// Looking addresses up in made-up image tables, and turning a buffer of raw samples into
/// the wire's HangStack.
@Suite("Image table and HangStack encoding")
struct ImageTableTests {
    static let app = ImageTable.Image(id: "00112233445566778899aabbccddeeff00112233", path: "/apps/Shop/Shop",
                                      base: 0x5555_0000_0000, size: 0x10_0000, text: [0x5555_0000_1000..<0x5555_0008_0000],
                                      isApp: true, omitsFramePointers: false)
    static let libc = ImageTable.Image(id: "2e2ad1ea23c1f2b8", path: "/lib/x86_64-linux-gnu/libc.so.6",
                                       base: 0x7f00_0000_0000, size: 0x20_0000, text: [0x7f00_0002_8000..<0x7f00_0017_d000],
                                       isApp: false, omitsFramePointers: true)
    static let noBuildID = ImageTable.Image(id: "", path: "/usr/lib/libquiet.so", base: 0x7f00_1000_0000, size: 0x1000,
                                            text: [0x7f00_1000_0000..<0x7f00_1000_1000], isApp: false, omitsFramePointers: true)
    static let table = ImageTable(images: [libc, noBuildID, app])  // any order

    @Test("Images are sorted by base; text ranges by start, flagged where frame pointers are omitted")
    func sorted() {
        #expect(Self.table.images.map(\.name) == ["Shop", "libc.so.6", "libquiet.so"])
        #expect(Self.table.textRanges.map(\.start) == [0x5555_0000_1000, 0x7f00_0002_8000, 0x7f00_1000_0000])
        #expect(Self.table.textRanges.map(\.flags) == [0, 1, 1])
    }

    @Test("lookup gives the image and the offset from its base, or nil outside every image",
          arguments: [
              (0x5555_0000_0000, 0, 0),
              (0x5555_0000_2150, 0, 0x2150),
              (0x5555_000f_ffff, 0, 0xf_ffff),
              (0x7f00_0009_8a2c, 1, 0x9_8a2c),
              (0x7f00_1000_0fff, 2, 0xfff),
          ] as [(UInt64, Int, UInt64)])
    func lookup(address: UInt64, image: Int, offset: UInt64) throws {
        let found = try #require(Self.table.lookup(address))
        #expect(found.index == image && found.offset == offset)
    }

    @Test("Addresses below, between and above the images are in none", arguments: [0, 0x5554_ffff_ffff, 0x5555_0010_0000, 0x7f00_0020_0000, 0x7f00_1000_1000, .max] as [UInt64])
    func outside(address: UInt64) {
        #expect(Self.table.lookup(address) == nil)
    }

    @Test("An empty table holds nothing")
    func empty() {
        #expect(ImageTable(images: []).lookup(0x1000) == nil)
    }

    @Test("Build ids are lowercase hex, two digits a byte")
    func hex() {
        #expect(ImageTable.hex([0x00, 0x0f, 0xa5, 0xff]) == "000fa5ff")
        #expect(ImageTable.hex([UInt8]()) == "")
    }

    @Test("Samples become deduplicated (image, offset) frames; images in first-seen order; times from the hang's start")
    func encoding() throws {
        var buffer = StackSampleBuffer(capacity: 4, depth: 8)
        let hangStart: UInt64 = 10_000_000_000
        let stacks: [[UInt64]] = [
            [0x7f00_0009_8a2c, 0x5555_0000_2150, 0x5555_0000_3000],
            [0x7f00_0009_8a2c, 0x5555_0000_2150, 0x5555_0000_3000],
            [0x5555_0000_2200, 0x5555_0000_3000],
        ]
        for (index, stack) in stacks.enumerated() {
            let kept = buffer.write(at: hangStart + UInt64(index) * 100_000_000) { slot in
                for (position, address) in stack.enumerated() { slot[position] = address }
                return stack.count
            }
            #expect(kept)
        }
        let (stack, dropped) = buffer.hangStack(images: Self.table, hangStart: hangStart)
        #expect(dropped == 0)
        #expect(stack == HangStack(
            images: [
                HangStack.Image(id: "2e2ad1ea23c1f2b8", name: "libc.so.6", size: 0x20_0000, app: false),
                HangStack.Image(id: "00112233445566778899aabbccddeeff00112233", name: "Shop", size: 0x10_0000, app: true),
            ],
            frames: [
                HangStack.Frame(image: 0, offset: 0x9_8a2c),
                HangStack.Frame(image: 1, offset: 0x2150),
                HangStack.Frame(image: 1, offset: 0x3000),
                HangStack.Frame(image: 1, offset: 0x2200),
            ],
            samples: [
                HangStack.Sample(at: 0, frames: [0, 1, 2]),
                HangStack.Sample(at: 0.1, frames: [0, 1, 2]),
                HangStack.Sample(at: 0.2, frames: [3, 2]),
            ]))
    }

    @Test("Addresses in no image, or in an image without a build id, are left out and counted")
    func dropped() {
        var buffer = StackSampleBuffer(capacity: 2, depth: 8)
        buffer.write(at: 5) { slot in
            slot[0] = 0x7f00_1000_0010  // libquiet.so: no build id
            slot[1] = 0x1234            // no image
            slot[2] = 0x5555_0000_2150
            return 3
        }
        let (stack, dropped) = buffer.hangStack(images: Self.table, hangStart: 0)
        #expect(dropped == 2)
        #expect(stack.images.map(\.name) == ["Shop"])
        #expect(stack.samples == [HangStack.Sample(at: 5e-9, frames: [0])])
    }

    @Test("A sample none of whose addresses can be sent is left out; an image of size 0 sends nothing")
    func emptySamples() {
        let empty = ImageTable.Image(id: "ffeeddccbbaa99887766554433221100", path: "/usr/lib/libempty.so",
                                     base: 0x7f00_2000_0000, size: 0, text: [], isApp: false, omitsFramePointers: false)
        var buffer = StackSampleBuffer(capacity: 3, depth: 4)
        buffer.write(at: 1) { slot in slot[0] = 0x1234; slot[1] = 0x7f00_1000_0010; return 2 }  // nothing sendable
        buffer.write(at: 2) { slot in slot[0] = 0x5555_0000_2150; return 1 }
        buffer.write(at: 3) { slot in slot[0] = 0x7f00_2000_0000; return 1 }  // the size-0 image holds nothing
        let (stack, dropped) = buffer.hangStack(images: ImageTable(images: [Self.libc, Self.noBuildID, Self.app, empty]),
                                                hangStart: 0)
        #expect(stack.samples == [HangStack.Sample(at: 2e-9, frames: [0])])
        #expect(stack.images.map(\.name) == ["Shop"])
        #expect(dropped == 3)
    }

    @Test("Beyond 64 distinct images, further images' frames are dropped")
    func imageBound() {
        let images = (0..<70).map { index in
            ImageTable.Image(id: String(repeating: "ab", count: 8) + String(format: "%02x", index), path: "/lib/l\(index).so",
                             base: UInt64(index + 1) << 32, size: 0x1000, text: [], isApp: false, omitsFramePointers: true)
        }
        let table = ImageTable(images: images)
        var buffer = StackSampleBuffer(capacity: 1, depth: 128)
        buffer.write(at: 0) { slot in
            for index in 0..<70 { slot[index] = (UInt64(index + 1) << 32) + 8 }
            return 70
        }
        let (stack, dropped) = buffer.hangStack(images: table, hangStart: 0)
        #expect(stack.images.count == HangStack.maximumImages)
        #expect(dropped == 6)
        #expect(stack.samples[0].frames.count == 64)
    }

    @Test("Long image names are cut to 128 bytes of UTF-8 on a character boundary")
    func longName() {
        let long = String(repeating: "é", count: 100)  // 200 bytes
        let image = ImageTable.Image(id: "0011223344556677", path: "/x/" + long, base: 0x1000, size: 0x1000, text: [],
                                     isApp: true, omitsFramePointers: false)
        var buffer = StackSampleBuffer(capacity: 1, depth: 4)
        buffer.write(at: 0) { slot in
            slot[0] = 0x1010
            return 1
        }
        let (stack, _) = buffer.hangStack(images: ImageTable(images: [image]), hangStart: 0)
        #expect(stack.images.first?.name == String(repeating: "é", count: 64))
    }
}

@Suite("Stack sample buffer")
struct StackSampleBufferTests {
    @Test("Writes fill slots in order up to the capacity; a failed or extra write keeps nothing")
    func writes() {
        var buffer = StackSampleBuffer(capacity: 2, depth: 4)
        var slotSize = 0
        #expect(buffer.write(at: 1) { slot in
            slotSize = slot.count
            slot[0] = 10
            slot[1] = 11
            return 2
        })
        #expect(slotSize == 4)
        #expect(!buffer.write(at: 2) { _ in 0 })   // failed sample
        #expect(!buffer.write(at: 2) { _ in -1 })
        #expect(buffer.write(at: 3) { slot in
            for index in slot.indices { slot[index] = 20 + UInt64(index) }
            return 9  // more than the slot: cut to the depth
        })
        #expect(buffer.isFull)
        #expect(!buffer.write(at: 4) { _ in 1 })
        #expect(Array(buffer.addresses(ofSample: 0)) == [10, 11])
        #expect(Array(buffer.addresses(ofSample: 1)) == [20, 21, 22, 23])
        #expect(buffer.time(ofSample: 0) == 1 && buffer.time(ofSample: 1) == 3)
    }

    @Test("removeLast forgets the latest sample; removeAll all of them, and the slots are reused")
    func removal() {
        var buffer = StackSampleBuffer(capacity: 3, depth: 2)
        buffer.write(at: 1) { slot in slot[0] = 1; return 1 }
        buffer.write(at: 2) { slot in slot[0] = 2; return 1 }
        buffer.removeLast()
        #expect(buffer.count == 1)
        buffer.write(at: 3) { slot in slot[0] = 3; return 1 }
        #expect(Array(buffer.addresses(ofSample: 1)) == [3])
        buffer.removeAll()
        #expect(buffer.count == 0 && !buffer.isFull)
        buffer.write(at: 4) { slot in slot[0] = 4; return 1 }
        #expect(Array(buffer.addresses(ofSample: 0)) == [4] && buffer.time(ofSample: 0) == 4)
    }
}
