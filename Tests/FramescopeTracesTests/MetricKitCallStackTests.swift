import Foundation
import FramescopeCore
@testable import FramescopeTraces
import Testing

/// MetricKit hang call-stack trees: read from the corpus payload and from Sentry's real tree
/// (../shared/binaries/sentry-cocoa/tree-real.json), turned into weighted paths and into the
/// wire's HangStack.
@Suite("Trace readers: MetricKit call-stack trees")
struct MetricKitCallStackTests {
    static var shared: URL {
        MetricKitTests.corpus.deletingLastPathComponent().deletingLastPathComponent()
    }

    func payloads(_ bytes: [UInt8]) throws(TraceError) -> [MetricKitPayload] {
        var source = MemoryByteSource(bytes, chunkSize: 61)
        var read: [MetricKitPayload] = []
        try MetricKitParser(file: "payload.json").read(from: &source) { payload, _ in read.append(payload) }
        return read
    }

    @Test("Xcode's simulated hang: one root frame of testBinaryName at 123, 20 samples, as a stack of one frame")
    func simulated() throws {
        let bytes = Array(try Data(contentsOf: MetricKitTests.corpus.appendingPathComponent("meter_xcode-simulated_ios14_diagnostic-payload.json")))
        let payload = try #require(try payloads(bytes).first)
        #expect(payload.hangDurations == [20])
        let stack = try #require(payload.hangCallStacks.first)
        #expect(stack.diagnostic == 0)
        #expect(stack.roots == [MetricKitCallStackFrame(binaryUUID: "CDB53DDB-2337-4933-B62F-4356E6174AF0", binaryName: "testBinaryName",
                                                        offset: 123, sampleCount: 20)])
        let hang = try #require(MetricKitCallStackFrame.hangStack(stack.roots) { _, _ in true })
        #expect(hang.images == [HangStack.Image(id: "cdb53ddb23374933b62f4356e6174af0", name: "testBinaryName", size: 124, app: true)])
        #expect(hang.frames == [HangStack.Frame(image: 0, offset: 123)])
        #expect(hang.samples.count == HangStack.maximumSamples && hang.samples.allSatisfy { $0.frames == [0] })
    }

    @Test("Sentry's real tree: the thread-attributed stack of 16, 27 frames deep from Sentry to dyld")
    func realTree() throws {
        let tree = try String(contentsOf: Self.shared.appendingPathComponent("binaries/sentry-cocoa/tree-real.json"), encoding: .utf8)
        let body = "{\"hangDiagnostics\": [{\"callStackTree\": \(tree), \"diagnosticMetaData\": {\"hangDuration\": \"2 sec\", \"appVersion\": \"1.0\"}}]}"
        let payload = try #require(try payloads(Array(body.utf8)).first)
        let roots = try #require(payload.hangCallStacks.first?.roots)
        let paths = MetricKitCallStackFrame.paths(roots)
        #expect(paths.count == 1 && paths[0].weight == 1)
        #expect(paths[0].frames.count == 27)
        #expect(paths[0].frames.first?.binaryName == "Sentry" && paths[0].frames.first?.offset == 414_732)
        #expect(paths[0].frames.last?.binaryName == "dyld" && paths[0].frames.last?.offset == 88_416)
        let system: Set<String> = ["UIKitCore", "CoreFoundation", "GraphicsServices", "dyld", "libdyld.dylib", "Foundation"]
        let stack = try #require(MetricKitCallStackFrame.hangStack(roots) { name, _ in !system.contains(name) })
        #expect(stack.samples.first?.frames.count == 27)
        #expect(stack.images.first { $0.name == "Sentry" }?.app == true)
        #expect(stack.images.first { $0.name == "UIKitCore" }?.app == false)
        #expect(stack.frames.allSatisfy { $0.offset < stack.images[$0.image].size })
    }

    @Test("A branching tree: each path weighs its own samples; samples are shared out in proportion")
    func branching() throws {
        // spin() ← render() ← main (6), spin() ← layout() ← main (2), and 2 ending in spin() itself.
        let main = MetricKitCallStackFrame(binaryUUID: "11111111-2222-3333-4444-555555555555", binaryName: "Shop", offset: 0x10, sampleCount: 6)
        var render = MetricKitCallStackFrame(binaryUUID: main.binaryUUID, binaryName: "Shop", offset: 0x200, sampleCount: 6)
        render.subFrames = [main]
        var mainToo = main
        mainToo.sampleCount = 2
        var layout = MetricKitCallStackFrame(binaryUUID: main.binaryUUID, binaryName: "Shop", offset: 0x300, sampleCount: 2)
        layout.subFrames = [mainToo]
        let spin = MetricKitCallStackFrame(binaryUUID: main.binaryUUID, binaryName: "Shop", offset: 0x400, sampleCount: 10,
                                           subFrames: [render, layout])
        let paths = MetricKitCallStackFrame.paths([spin])
        #expect(paths.map(\.weight) == [6, 2, 2])
        #expect(paths.map { $0.frames.map(\.offset) } == [[0x400, 0x200, 0x10], [0x400], [0x400, 0x300, 0x10]])
        let stack = try #require(MetricKitCallStackFrame.hangStack([spin]) { _, _ in true })
        #expect(stack.samples.count == 50)
        #expect(stack.samples.filter { $0.frames.count == 3 && stack.frames[$0.frames[1]].offset == 0x200 }.count == 30)
    }

    @Test("Broken frames are left out with an issue; a tree without a thread-attributed stack gives none; the rest still counts")
    func broken() throws {
        let body = """
        {"hangDiagnostics": [
          {"callStackTree": {"callStacks": [{"threadAttributed": true, "callStackRootFrames": [
             {"binaryName": "Shop", "offsetIntoBinaryTextSegment": 5, "sampleCount": 3},
             {"binaryUUID": "AAAAAAAA-BBBB-CCCC-DDDD-EEEEEEEEEEEE", "binaryName": "Shop", "offsetIntoBinaryTextSegment": 7.5},
             {"binaryUUID": "AAAAAAAA-BBBB-CCCC-DDDD-EEEEEEEEEEEE", "binaryName": "Shop", "offsetIntoBinaryTextSegment": 9, "sampleCount": "x"}]}]},
           "diagnosticMetaData": {"hangDuration": "1 sec"}},
          {"callStackTree": {"callStacks": [{"threadAttributed": false, "callStackRootFrames": [
             {"binaryUUID": "AAAAAAAA-BBBB-CCCC-DDDD-EEEEEEEEEEEE", "binaryName": "Shop", "offsetIntoBinaryTextSegment": 9}]}]},
           "diagnosticMetaData": {"hangDuration": "2 sec"}}]}
        """
        let payload = try #require(try payloads(Array(body.utf8)).first)
        #expect(payload.hangDurations == [1, 2])
        #expect(payload.hangCallStacks.count == 1)
        #expect(payload.hangCallStacks.first?.roots.map(\.offset) == [9])
        #expect(payload.issues.filter { $0.field.contains("callStackRootFrames") }.count == 2)
    }

    /// A call-stack tree whose thread-attributed stack is one chain of `depth` frames of the
    /// app's image, innermost first (offsets 0x1000, 0x1010, …), with 5 samples.
    static func chain(depth: Int) -> String {
        var text = ""
        for level in 0..<depth {
            text += #"{"binaryUUID": "11111111-2222-3333-4444-555555555555", "binaryName": "Shop", "#
                + #""offsetIntoBinaryTextSegment": \#(0x1000 + 16 * level), "sampleCount": 5, "subFrames": ["#
        }
        text += String(repeating: "]}", count: depth)
        return #"{"callStacks": [{"threadAttributed": true, "callStackRootFrames": [\#(text)]}]}"#
    }

    @Test("A crash diagnostic's call-stack tree 300 (and 50,000) frames deep is skipped unread, at any depth; the hang beside it is read")
    func deepUnreadTree() throws {
        for depth in [300, 50_000] {
            let body = """
            {"timeStampEnd": "2026-11-19 23:59:00 +0000", "metaData": {"appVersion": "2.0"},
             "crashDiagnostics": [{"callStackTree": \(Self.chain(depth: depth)), "diagnosticMetaData": {"exceptionType": 1}}],
             "hangDiagnostics": [{"callStackTree": \(Self.chain(depth: 3)), "diagnosticMetaData": {"hangDuration": "2 sec"}}]}
            """
            let payload = try #require(try payloads(Array(body.utf8)).first, "\(depth)")
            #expect(payload.appVersion == "2.0")
            #expect(payload.otherDiagnostics == [MetricKitDiagnosticCount(kind: "crashDiagnostics", count: 1)])
            #expect(payload.hangDurations == [2])
            #expect(payload.hangCallStacks.first.map { MetricKitCallStackFrame.paths($0.roots)[0].frames.count } == 3)
            #expect(payload.issues.isEmpty, "\(payload.issues)")
        }
    }

    @Test("A hang's tree 300 frames deep is read to 256 frames, the deeper callers skipped and the cut stated; 600 deep alike")
    func deepReadTree() throws {
        for depth in [256, 300, 600] {
            let body = #"{"hangDiagnostics": [{"callStackTree": \#(Self.chain(depth: depth)), "diagnosticMetaData": {"hangDuration": "3 sec"}}]}"#
            let payload = try #require(try payloads(Array(body.utf8)).first, "\(depth)")
            #expect(payload.hangDurations == [3])
            let roots = try #require(payload.hangCallStacks.first?.roots)
            let paths = MetricKitCallStackFrame.paths(roots)
            #expect(paths.count == 1 && paths[0].weight == 5)
            #expect(paths[0].frames.count == MetricKitParser.maximumCallStackDepth)
            #expect(paths[0].frames.last?.offset == UInt64(0x1000 + 16 * 255))
            let cuts = payload.issues.filter { $0.message.contains("deeper than 256 frames") }
            if depth == 256 {
                #expect(cuts.isEmpty, "a tree exactly 256 deep is whole")
            } else {
                #expect(cuts.map(\.field) == ["hangDiagnostics[0].callStackTree.callStacks[0]"], "\(payload.issues)")
            }
            let stack = try #require(MetricKitCallStackFrame.hangStack(roots) { _, _ in true })
            #expect(stack.samples.allSatisfy { $0.frames.count == HangStack.maximumDepth })
        }
    }
}
