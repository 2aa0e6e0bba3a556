@testable import FramescopeCollector
import FramescopeCore
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
