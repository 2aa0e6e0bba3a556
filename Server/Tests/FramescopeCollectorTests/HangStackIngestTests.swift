import Foundation
@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeSQLite
@testable import FramescopeStore
import Testing

/// Hangs with sampled stacks on the wire (issue 33): decoded by the fast path exactly as
/// `JSONDecoder` decodes them, checked by field, normalised, and kept out of the raw event.
@Suite("Hang stacks at ingest")
struct HangStackIngestTests {
    static let now = CanonicalIngestTests.now

    static func stackedBatch() -> EventBatch {
        var batch = WireBatchDecoderTests.richBatch()
        batch.events[0].hangs = [
            HangRecord(offset: 0.5, duration: 0.75, stack: HangStackFixtures.stack(site: 0x215c)),
            HangRecord(offset: 2, duration: 0.3, idle: true, stack: HangStackFixtures.stack(site: 0x25b8, samples: 2)),
            HangRecord(offset: 3, duration: 0.4, idle: false),
        ]
        return batch
    }

    @Test("Stacks take the fast path and decode to exactly what JSONDecoder gives",
          arguments: WireBatchDecoderTests.Spelling.allCases)
    func decoderAgreement(spelling: WireBatchDecoderTests.Spelling) throws {
        let body = try WireBatchDecoderTests.encode(Self.stackedBatch(), compact: spelling.compactReports, formatting: spelling.formatting)
        let expected = WireBatchDecoderTests.reference(body)
        guard case let .batch(_, _, _, _, events) = expected, case let .decoded(first) = events.first else {
            Issue.record("the reference refused the batch: \(expected)")
            return
        }
        #expect(first.hangs[0].stack == HangStackFixtures.stack(site: 0x215c))
        #expect(first.hangs[1].idle == true)
        #expect(WireBatchDecoderTests.current(body) == expected)
        if spelling.compactReports { #expect(WireBatchDecoderTests.fastPathTaken(body)) }
    }

    @Test("Odd stack shapes decode as JSONDecoder decodes them (or are refused the same way)", arguments: [
        #"{"offset":1,"duration":1,"stack":null,"idle":null}"#,
        #"{"offset":1,"duration":1,"stack":{"images":[],"frames":[],"samples":[]}}"#,
        #"{"offset":1,"duration":1,"stack":{"images":[],"frames":[[0]],"samples":[]}}"#,
        #"{"offset":1,"duration":1,"stack":{"images":[],"frames":[[0,1,2]],"samples":[]}}"#,
        #"{"offset":1,"duration":1,"stack":{"images":[],"frames":[[0,-1]],"samples":[]}}"#,
        #"{"offset":1,"duration":1,"stack":{"images":[],"frames":[[0,18446744073709551615]],"samples":[]}}"#,
        #"{"offset":1,"duration":1,"stack":{"images":[{"id":"ab","name":"x","size":-4,"app":true}],"frames":[],"samples":[]}}"#,
        #"{"offset":1,"duration":1,"stack":{"images":[{"id":"ab","name":"x","size":4,"app":true,"extra":1}],"frames":[],"samples":[]}}"#,
        #"{"offset":1,"duration":1,"stack":{"images":[],"frames":[],"samples":[{"at":0,"frames":[0,1.5]}]}}"#,
        #"{"offset":1,"duration":1,"stack":{"images":[],"frames":[],"samples":[{"at":0}]}}"#,
        #"{"offset":1,"duration":1,"idle":"yes"}"#,
        #"{"offset":1,"duration":1,"stack":[]}"#,
    ])
    func oddShapes(hang: String) throws {
        var batch = makeBatch(id: "odd", count: 1, start: 1_790_000_000)
        batch.events[0].hangs = []
        let text = String(decoding: try WireBatchDecoderTests.encode(batch), as: UTF8.self)
            .replacingOccurrences(of: #""hangs":[]"#, with: #""hangs":[\#(hang)]"#)
        let body = Array(text.utf8)
        #expect(WireBatchDecoderTests.current(body) == WireBatchDecoderTests.reference(body))
    }

    @Test("An event of kind fatalHang with a visit's members is refused as JSONDecoder refuses it, on both paths")
    func fatalKindWithVisitMembers() throws {
        let batch = makeBatch(id: "kind", count: 1, start: 1_790_000_000)
        let text = String(decoding: try WireBatchDecoderTests.encode(batch), as: UTF8.self)
            .replacingOccurrences(of: #""kind":"screenVisit""#, with: #""kind":"fatalHang""#)
        let body = Array(text.utf8)
        #expect(WireBatchDecoderTests.current(body) == WireBatchDecoderTests.reference(body))
        #expect(!WireBatchDecoderTests.fastPathTaken(body))
    }

    @Test("A stack breaking any limit is dropped with its field; its visit is kept")
    func limits() {
        let validator = IngestValidator(limits: IngestLimits(), now: Self.now)
        let base = makeBatch(id: "x", count: 1, start: Self.now - 3600).events[0]
        func problem(_ edit: (inout HangStack) -> Void) -> String? {
            var stack = HangStackFixtures.stack(site: 0x215c)
            edit(&stack)
            var event = base
            event.hangs = [HangRecord(offset: 0.5, duration: 0.75, stack: stack)]
            let dropped = validator.dropInvalidStacks(&event)
            #expect(validator.check(event, startedAt: Self.now - 3600) == nil, "the visit stays valid")
            #expect(dropped.isEmpty == (event.hangs[0].stack != nil))
            #expect(event.hangs[0].duration == 0.75)
            return dropped.first?.0
        }
        #expect(problem { _ in } == nil)
        #expect(problem { $0.images = Array(repeating: HangStackFixtures.appImage, count: 65) } == "hangs[0].stack.images")
        #expect(problem { $0.images[0].id = "73d4" } == "hangs[0].stack.images[0].id")
        #expect(problem { $0.images[0].id = "73d406b3246a378bbefc16429a4d813" } == "hangs[0].stack.images[0].id")
        #expect(problem { $0.images[0].id = "zzd406b3246a378bbefc16429a4d8133" } == "hangs[0].stack.images[0].id")
        #expect(problem { $0.images[1].name = "/usr/lib/UIKitCore" } == "hangs[0].stack.images[1].name")
        #expect(problem { $0.images[1].name = "UIKit\u{202E}Core" } == "hangs[0].stack.images[1].name")
        #expect(problem { $0.images[1].name = "" } == "hangs[0].stack.images[1].name")
        #expect(problem { $0.images[1].name = String(repeating: "x", count: 129) } == "hangs[0].stack.images[1].name")
        #expect(problem { $0.images[0].size = 0 } == "hangs[0].stack.images[0].size")
        #expect(problem { $0.images[0].size = (1 << 32) + 1 } == "hangs[0].stack.images[0].size")
        #expect(problem { $0.frames[1].image = 2 } == "hangs[0].stack.frames[1]")
        #expect(problem { $0.frames[1].image = -1 } == "hangs[0].stack.frames[1]")
        #expect(problem { $0.frames[1].offset = 1 << 20 } == "hangs[0].stack.frames[1]")
        #expect(problem { $0.frames += Array(repeating: HangStack.Frame(image: 0, offset: 1), count: 2_560) } == "hangs[0].stack.frames")
        #expect(problem { $0.samples = [] } == "hangs[0].stack.samples")
        #expect(problem { $0.samples = Array(repeating: $0.samples[0], count: 51) } == "hangs[0].stack.samples")
        #expect(problem { $0.samples[2].at = 0 } == "hangs[0].stack.samples[2].at")
        #expect(problem { $0.samples[4].at = 1.76 } == "hangs[0].stack.samples[4].at")
        #expect(problem { $0.samples[4].at = .nan } == "hangs[0].stack.samples[4].at")
        #expect(problem { $0.samples[1].frames = [] } == "hangs[0].stack.samples[1].frames")
        #expect(problem { $0.samples[1].frames = Array(repeating: 0, count: 257) } == "hangs[0].stack.samples[1].frames")
        #expect(problem { $0.samples[1].frames[3] = 5 } == "hangs[0].stack.samples[1].frames[3]")

        // 33 stacked hangs: the shortest one's stack goes; all 33 hangs stay.
        var many = base
        many.hangs = (0..<33).map {
            HangRecord(offset: Double($0), duration: $0 == 7 ? 0.3 : 0.5, stack: HangStackFixtures.stack(site: 0x215c, samples: 1))
        }
        let dropped = validator.dropInvalidStacks(&many)
        #expect(dropped.map(\.0) == ["hangs[7].stack"])
        #expect(many.hangs.count == 33 && many.hangs.filter { $0.stack != nil }.count == 32 && many.hangs[7].stack == nil)
        #expect(validator.check(many, startedAt: Self.now - 3600) == nil)
        many.hangs.removeLast()
        many.hangs[7].stack = HangStackFixtures.stack(site: 0x215c, samples: 1)
        #expect(validator.dropInvalidStacks(&many).isEmpty)

        // A hang longer than its visit refuses the visit.
        var long = base
        long.hangs = [HangRecord(offset: 0, duration: long.duration + 1.5)]
        #expect(validator.check(long, startedAt: Self.now - 3600)?.0 == "hangs[0].duration")
    }

    @Test("Image ids are lowercased without dashes and names put into NFC before the checks")
    func normalised() {
        var event = makeBatch(id: "x", count: 1, start: Self.now - 3600).events[0]
        var stack = HangStackFixtures.stack(site: 0x215c)
        stack.images[0].id = "73D406B3-246A-378B-BEFC-16429A4D8133"
        stack.images[0].name = "Cafe\u{301}"
        event.hangs = [HangRecord(offset: 0.5, duration: 0.75, stack: stack)]
        #expect(IngestValidator.normalize(&event) == nil)
        #expect(event.hangs[0].stack?.images[0].id == "73d406b3246a378bbefc16429a4d8133")
        #expect(event.hangs[0].stack?.images[0].name.unicodeScalars.count == 4)
        #expect(IngestValidator(limits: IngestLimits(), now: Self.now).check(event, startedAt: Self.now - 3600) == nil)
    }

    @Test("The stored raw event keeps offset, duration and idle, never the stack; a hang without them is stored as before")
    func rawEventWithoutStack() throws {
        var event = makeBatch(id: "x", count: 1, start: Self.now - 3600).events[0]
        event.hangs = [HangRecord(offset: 0.5, duration: 0.75, stack: HangStackFixtures.stack(site: 0x215c)),
                       HangRecord(offset: 2, duration: 0.5, idle: true, stack: HangStackFixtures.stack(site: 0x215c)),
                       HangRecord(offset: 3, duration: 0.5, idle: false)]
        let text = StoredEventJSON.encode(event)
        #expect(!text.contains("stack"))
        #expect(text.contains(#"{"offset":0.5,"duration":0.75},{"offset":2.0,"duration":0.5,"idle":true},{"offset":3.0,"duration":0.5}"#))
        let back = try JSONDecoder().decode(ScreenVisitEvent.self, from: Data(text.utf8))
        #expect(back.hangs == [HangRecord(offset: 0.5, duration: 0.75), HangRecord(offset: 2, duration: 0.5, idle: true),
                               HangRecord(offset: 3, duration: 0.5)])
    }
}
