@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeSQLite
@testable import FramescopeStore
import Testing

/// The dominant app frame and the representative stack (``HangSummary``), at made-up stacks.
@Suite("Hang signatures")
struct HangSummaryTests {
    typealias Fixtures = HangStackFixtures

    @Test("The dominant frame is the app frame in the most samples, not whatever the first sample caught")
    func mostSamples() {
        // The site in samples 1–4; another app function in sample 0 only.
        let summary = HangSummary(Fixtures.stack(site: 0x215c, samples: 5, elsewhere: [0]))
        #expect(summary.signature == "73d406b3246a378bbefc16429a4d8133+0x215b")
        #expect(summary.dominant?.offset == 0x215c)
        #expect(summary.dominant?.lookupOffset == 0x215b, "a return address is looked up one byte earlier")
        #expect(summary.dominant?.share == 0.8)
        #expect(summary.samples == 5)
        // The representative sample holds the dominant frame; shares are per frame.
        #expect(summary.stack.map(\.offset) == [0x1_2340, 0x215c, 0x4000, 0x2_0000])
        #expect(summary.stack.map(\.share) == [1, 0.8, 1, 1])
        #expect(summary.stack.map(\.image) == ["UIKitCore", "Shop", "Shop", "UIKitCore"])
    }

    @Test("The deepest frame most samples hold wins: the callers every sample holds never outrank the slow code")
    func deepestOfTheMajority() {
        // The site (0xF000) and its caller (0x4000) are in every sample; the site is deeper
        // although its offset is higher.
        #expect(HangSummary(Fixtures.stack(site: 0xF000)).dominant?.offset == 0xF000)
        // The site in 2 of 5 samples, another app function in 3: no frame below the caller
        // has a majority but the other function, which wins.
        #expect(HangSummary(Fixtures.stack(site: 0x215c, samples: 5, elsewhere: [0, 1, 2])).dominant?.offset == 0x9000)
        // Site and elsewhere in one sample each of two: nothing but the caller has a
        // majority, so the caller names the hang.
        #expect(HangSummary(Fixtures.stack(site: 0x215c, samples: 2, elsewhere: [1])).dominant?.offset == 0x4000)
    }

    @Test("A tie in samples and depth goes to the lower offset; an interrupted instruction is looked up where it is")
    func ties() {
        let images = [Fixtures.appImage, Fixtures.systemImage]
        // Two app leaves (PCs, frame 0) alternate: each in half the samples, equally deep.
        let stack = HangStack(images: images,
                              frames: [HangStack.Frame(image: 0, offset: 0x3000), HangStack.Frame(image: 0, offset: 0x2000),
                                       HangStack.Frame(image: 1, offset: 0x10)],
                              samples: [HangStack.Sample(at: 0, frames: [0, 2]), HangStack.Sample(at: 0.1, frames: [1, 2])])
        let summary = HangSummary(stack)
        #expect(summary.dominant?.offset == 0x2000)
        #expect(summary.dominant?.lookupOffset == 0x2000, "a frame seen only as the interrupted instruction is not a return address")
        #expect(summary.signature == "73d406b3246a378bbefc16429a4d8133+0x2000")
    }

    @Test("An app computing in one function: its instruction moves from sample to sample, the function still dominates, not its caller")
    func computingLeaf() {
        let images = [Fixtures.appImage, Fixtures.systemImage]
        // render(…) at 0x5100…0x510c, called from play(…) (return address 0x4050), from the run loop.
        let distinct: [UInt64] = [0x5100, 0x5104, 0x5108, 0x510c]
        let pcs = [0, 1, 2, 1, 3]  // indices into `distinct`: 0x5104 twice
        var frames = distinct.map { HangStack.Frame(image: 0, offset: $0) }
        frames += [HangStack.Frame(image: 0, offset: 0x4050), HangStack.Frame(image: 1, offset: 0x10)]
        let samples = pcs.enumerated().map { index, pc in
            HangStack.Sample(at: Double(index) / 10, frames: [pc, distinct.count, distinct.count + 1])
        }
        let summary = HangSummary(HangStack(images: images, frames: frames, samples: samples))
        // By address, play's return address would be the only app frame in more than half the samples.
        #expect(summary.dominant?.offset == 0x5104, "the most frequent instruction of the function play calls")
        #expect(summary.dominant?.lookupOffset == 0x5104)
        #expect(summary.dominant?.share == 0.4)
        #expect(summary.stack.first?.offset == 0x5104, "the representative sample holds the dominant frame")
        #expect(HangGroup.dominant(of: summary.signature, in: summary.stack) == summary.dominant)

        // A helper that render calls in one sample of five: render's place still holds four.
        var helper = frames
        helper.append(HangStack.Frame(image: 0, offset: 0x5120))  // render's call site of the helper (return address)
        helper.append(HangStack.Frame(image: 0, offset: 0x7000))  // the helper's instruction
        var withHelper = samples
        withHelper[2] = HangStack.Sample(at: 0.2, frames: [helper.count - 1, helper.count - 2, distinct.count, distinct.count + 1])
        let mostlyRender = HangSummary(HangStack(images: images, frames: helper, samples: withHelper))
        #expect(mostlyRender.dominant?.offset == 0x5104)
    }

    @Test("With the build's symbols, frames count per function: a loop that calls a helper is still the loop's function")
    func perFunctionWithSymbols() throws {
        let images = [Fixtures.appImage, Fixtures.systemImage]
        // render(…) [0x5000, 0x5200) loops and calls now() [0x7000, 0x7100) at 0x5120;
        // play(…) [0x4000, 0x4100) calls render at 0x4050.
        let frames = [HangStack.Frame(image: 0, offset: 0x5104), HangStack.Frame(image: 0, offset: 0x7010),
                      HangStack.Frame(image: 0, offset: 0x5125), HangStack.Frame(image: 0, offset: 0x4050),
                      HangStack.Frame(image: 1, offset: 0x10)]
        let samples = [
            HangStack.Sample(at: 0.0, frames: [0, 3, 4]),     // in render's loop
            HangStack.Sample(at: 0.1, frames: [1, 2, 3, 4]),  // in now(), called from render
        ]
        let stack = HangStack(images: images, frames: frames, samples: samples)
        // Per address, only play's call site is in both samples: play names the hang.
        #expect(HangSummary(stack).dominant?.offset == 0x4050)
        func symbol(_ offset: UInt64, _ size: UInt64, _ name: String) -> SymbolUpload.Symbol {
            SymbolUpload.Symbol(offset: offset, size: size, name: name)
        }
        let table = SymbolTableBlob([symbol(0x4000, 0x100, "play()"), symbol(0x5000, 0x200, "render()"), symbol(0x7000, 0x100, "now()")])
        let summary = HangSummary(stack, symbols: [Fixtures.appImage.id: table])
        // Per function, render() is in both samples (at 0x5104, and as now()'s caller at 0x5125) and
        // deeper than play(); now() is in one. Its frames tie: the lower offset stands for it.
        #expect(summary.dominant?.offset == 0x5104)
        #expect(table.name(at: try #require(summary.dominant).lookupOffset) == "render()")
        #expect(HangGroup.dominant(of: summary.signature, in: summary.stack) == summary.dominant)
        // An image without symbols is counted per address as before.
        #expect(HangSummary(stack, symbols: [Fixtures.systemImage.id: table]).dominant?.offset == 0x4050)
    }

    @Test("A function's clones are the function: samples in decode and in decode [clone .cold] count for decode, not its caller")
    func clonesAreOneFunction() throws {
        let images = [Fixtures.appImage, Fixtures.systemImage]
        // decode [0x5000, 0x5100) and its cold part [0x1080, 0x10a0), called from play [0x4000, 0x4100)
        // at 0x4050; another function [0x9000, 0x9100).
        let frames = [HangStack.Frame(image: 0, offset: 0x5010), HangStack.Frame(image: 0, offset: 0x1090),
                      HangStack.Frame(image: 0, offset: 0x9010), HangStack.Frame(image: 0, offset: 0x4050),
                      HangStack.Frame(image: 1, offset: 0x10)]
        // Two samples in decode, two in its cold part, one elsewhere: each part alone is in
        // two of five, which is no majority.
        let leaves = [0, 1, 0, 1, 2]
        let samples = leaves.enumerated().map { HangStack.Sample(at: Double($0.offset) / 10, frames: [$0.element, 3, 4]) }
        let stack = HangStack(images: images, frames: frames, samples: samples)
        let table = SymbolTableBlob([
            SymbolUpload.Symbol(offset: 0x1080, size: 0x20, name: "shop::decode(char const*, int) [clone .cold]"),
            SymbolUpload.Symbol(offset: 0x4000, size: 0x100, name: "play()"),
            SymbolUpload.Symbol(offset: 0x5000, size: 0x100, name: "shop::decode(char const*, int)"),
            SymbolUpload.Symbol(offset: 0x9000, size: 0x100, name: "other()"),
        ])
        let summary = HangSummary(stack, symbols: [Fixtures.appImage.id: table])
        let dominant = try #require(summary.dominant)
        #expect(CloneNote.function(of: try #require(table.name(at: dominant.lookupOffset))) == "shop::decode(char const*, int)",
                "decode is in four samples of five, deeper than play")
        #expect(dominant.offset == 0x1090, "a tie in samples between decode's frames goes to the lower offset")
    }

    @Test("A clone note names its function: the notes that end a name are dropped, nothing else", arguments: [
        ("shop::decode(char const*, int) [clone .cold]", "shop::decode(char const*, int)"),
        ("f(int) [clone .isra.0] [clone .cold]", "f(int)"),
        ("_ZN4shop6decodeEPKci [clone .constprop.0]", "_ZN4shop6decodeEPKci"),
        ("scaled [clone .part.12] [clone .constprop.56]", "scaled"),
        ("specialized trash(paths:)", "specialized trash(paths:)"),
        ("f(int) [clone .cold] tail", "f(int) [clone .cold] tail"),
        ("g [clone ]", "g [clone ]"), ("h [clone .a b]", "h [clone .a b]"), ("[clone .cold]", "[clone .cold]"),
    ])
    func cloneNotes(_ name: String, _ function: String) {
        #expect(CloneNote.function(of: name) == function)
    }

    @Test("Notes are written one per clone, as c++filt prints them")
    func cloneNoteText() {
        #expect(CloneNote.text([".isra.0", ".cold"]) == " [clone .isra.0] [clone .cold]")
        #expect(CloneNote.text([]) == "")
        #expect(CloneNote.function(of: "f(int)" + CloneNote.text([".part.0", ".isra.1", ".cold"])) == "f(int)")
    }

    @Test("Groups whose dominant frames lie in a function and in its clones merge under the function's name")
    func clonesMerge() {
        func group(_ offset: UInt64, hangs: Int, duration: Double) -> HangGroup {
            let frame = HangFrame(image: "Shop", imageId: Fixtures.appImage.id, offset: offset + 1, lookupOffset: offset, app: true, share: 1)
            return HangGroup(signature: HangSummary.signature(imageId: frame.imageId, lookupOffset: offset), hangs: hangs, fatal: 0,
                             duration: duration, screens: ["Feed"], appVersions: ["3.1.0"], firstSeen: 10, lastSeen: 20,
                             dominant: frame, stack: [frame])
        }
        let table = SymbolTableBlob([
            SymbolUpload.Symbol(offset: 0x1080, size: 0x20, name: "shop::decode(char const*, int) [clone .cold]"),
            SymbolUpload.Symbol(offset: 0x11c0, size: 0x30, name: "shop::scaled(int, int) [clone .constprop.0]"),
            SymbolUpload.Symbol(offset: 0x5000, size: 0x100, name: "shop::decode(char const*, int)"),
        ])
        let merged = HangGroup.merged([group(0x5010, hangs: 2, duration: 1), group(0x1090, hangs: 3, duration: 2),
                                       group(0x11c8, hangs: 1, duration: 0.5)],
                                      tables: [Fixtures.appImage.id: table])
        #expect(merged.map(\.signature) == ["Shop`shop::decode(char const*, int)", "Shop`shop::scaled(int, int)"])
        #expect(merged.map(\.hangs) == [5, 1])
        #expect(merged.first?.dominant?.lookupOffset == 0x1090, "the stack of the group with the most time, in the cold part")
    }

    @Test("Only the system's code: no app frame; no samples: no stack")
    func withoutAppFrames() {
        var stack = Fixtures.stack(site: 0x215c)
        stack.images[0].app = false
        let summary = HangSummary(stack)
        #expect(summary.signature == HangSummary.noAppFrame)
        #expect(summary.dominant == nil)
        #expect(summary.stack.count == 4, "the most frequent sample is still shown")
        stack.samples = []
        #expect(HangSummary(stack).signature == HangSummary.noStack)
        #expect(HangSummary.withoutStack.signature == HangSummary.noStack)
    }

    @Test("The same hang on devices with other load addresses has one signature (frames are image offsets)")
    func sameAcrossDevices() {
        // What two devices send differs only in frame order and sample times; the offsets
        // are the same because the SDK subtracts each image's base.
        let one = Fixtures.stack(site: 0x215c, samples: 3)
        var two = Fixtures.stack(site: 0x215c, samples: 7, interval: 0.05)
        two.frames.reverse()
        two.samples = two.samples.map { HangStack.Sample(at: $0.at, frames: $0.frames.map { 4 - $0 }) }
        #expect(HangSummary(one).signature == HangSummary(two).signature)
    }

    @Test("The stored stack reads back as written")
    func storedStackRoundTrip() {
        let summary = HangSummary(Fixtures.stack(site: 0x215c, samples: 3, elsewhere: [1]))
        let row = HangRow(key: "b/0/0", startedAt: 1, dimensionValues: [], tags: ["b": "2", "a": "\"1\""], duration: 1, fatal: false,
                          source: .sdk, summary: summary)
        #expect(HangGroup.stack(stored: row.storedStack) == summary.stack)
        #expect(row.storedTags == #"{"a":"\"1\"","b":"2"}"#)
        #expect(HangGroup.dominant(of: summary.signature, in: summary.stack) == summary.dominant)
        #expect(HangGroup.stack(stored: "not json").isEmpty)
    }
}
