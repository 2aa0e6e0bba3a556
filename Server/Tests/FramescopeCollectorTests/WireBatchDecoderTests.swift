import Foundation
@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeSQLite
import FramescopeSimulation
@testable import FramescopeStore
import NIOCore
import Testing

/// The specialised batch decoder against `JSONDecoder`: on every body, `decodeBatch`
/// must give what decoding the body with `JSONDecoder` (and then refusing repeated
/// members) gives, the same batch or the same error with the same field path.
@Suite("Batch decoding")
struct WireBatchDecoderTests {
    /// What decoding a body gave, in comparable form.
    enum Outcome: Equatable, CustomStringConvertible {
        case batch(id: String, app: AppInfo, device: DeviceInfo, sampleRate: Double?, events: [EventOutcome])
        case failure(code: String, field: String?, message: String)

        var description: String {
            switch self {
            case let .batch(id, app, _, rate, events): "batch \(id) app \(app.id ?? "-") rate \(rate.map { String($0) } ?? "-"): \(events)"
            case let .failure(code, field, message): "\(code) at \(field ?? "-"): \(message)"
            }
        }
    }

    /// One event's result: decoded, or rejected with a field path and a reason.
    enum EventOutcome: Equatable {
        case decoded(ScreenVisitEvent)
        case fatalHang(FatalHangEvent)
        case rejected(field: String, reason: String)
    }

    static func outcome(_ batch: WireBatch) -> Outcome {
        .batch(id: batch.batchId, app: batch.app, device: batch.device, sampleRate: batch.sampleRate, events: batch.events.map { lossy in
            switch lossy.result {
            case let .success(.visit(event)): .decoded(event)
            case let .success(.fatalHang(event)): .fatalHang(event)
            case let .failure(error): .rejected(field: error.fieldPath, reason: error.reason)
            }
        })
    }

    /// The collector's decoding without the specialised decoder: `JSONDecoder` for the
    /// batch, then the rule on repeated members.
    static func reference(_ body: [UInt8]) -> Outcome {
        do {
            var batch = try JSONDecoder().decode(WireBatch.self, from: Data(body))
            try body.withUnsafeBytes { try refuseRepeatedMembers(in: $0, of: &batch) }
            return outcome(batch)
        } catch let error as DecodingError {
            let field = error.fieldPath
            if case .dataCorrupted = error, field.isEmpty {
                return .failure(code: "invalid_json", field: nil, message: invalidJSONMessage(Data(body)))
            }
            return .failure(code: "invalid_field", field: field.isEmpty ? nil : field, message: error.reason)
        } catch let error as CollectorError {
            return .failure(code: error.code, field: error.field, message: error.message)
        } catch {
            return .failure(code: "other", field: nil, message: "\(error)")
        }
    }

    /// The collector's decoding now (`decodeBatch`).
    static func current(_ body: [UInt8]) -> Outcome {
        do {
            return outcome(try decodeBatch(ByteBuffer(bytes: body)))
        } catch let error as CollectorError {
            return .failure(code: error.code, field: error.field, message: error.message)
        } catch {
            return .failure(code: "other", field: nil, message: "\(error)")
        }
    }

    /// Whether the specialised decoder alone accepted the body (no fallback to `JSONDecoder` for the whole body).
    static func fastPathTaken(_ body: [UInt8]) -> Bool {
        body.withUnsafeBytes { WireBatchDecoder.decode($0) } != nil
    }

    /// A batch with every optional part exercised: hangs, resources, tags (with escapes
    /// and non-ASCII text), events with and without motion, a sample rate.
    static func richBatch(count: Int = 4) -> EventBatch {
        var batch = makeBatch(id: "rich-1", count: count, start: 1_790_000_000)
        batch.device.installationId = "install_01"
        batch.sampleRate = 0.25
        for index in batch.events.indices {
            batch.events[index].hangs = index % 2 == 0 ? [HangRecord(offset: 0.25 * Double(index), duration: 0.3125), HangRecord(offset: 1e-3, duration: 2)] : []
            batch.events[index].context.tags = ["plan": "pro/annual", "lang": "fr-FR", "note": "naïve \"quoted\"\n\u{1}", "emoji": "🚀"]
            batch.events[index].context.thermalState = .fair
            if index == 1 { batch.events[index].motion = nil }
            if index == 2 {
                batch.events[index].resources = ResourceUsage(cpuPercent: .init(min: 0, mean: 37.25, max: 99.9),
                                                              residentBytes: .init(min: 1.5e8, mean: 2.25e8, max: 3e8), samples: 12)
            }
        }
        return batch
    }

    static func encode(_ batch: EventBatch, compact: Bool = true, formatting: JSONEncoder.OutputFormatting = []) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.userInfo[ScreenVisitEvent.compactReportsKey] = compact
        encoder.outputFormatting = formatting
        return Array(try encoder.encode(batch))
    }

    /// The ways a client may write a batch.
    enum Spelling: String, CaseIterable, Sendable {
        case compact, compactSorted, compactPretty, compactPlainSlashes, json, jsonPretty

        var compactReports: Bool { ![.json, .jsonPretty].contains(self) }

        var formatting: JSONEncoder.OutputFormatting {
            switch self {
            case .compact, .json: []
            case .compactSorted: .sortedKeys
            case .compactPretty: [.prettyPrinted, .sortedKeys]
            case .compactPlainSlashes: .withoutEscapingSlashes
            case .jsonPretty: .prettyPrinted
            }
        }
    }

    @Test("Valid batches decode to exactly what JSONDecoder gives", arguments: Spelling.allCases)
    func validBatches(spelling: Spelling) throws {
        let body = try Self.encode(Self.richBatch(), compact: spelling.compactReports, formatting: spelling.formatting)
        let expected = Self.reference(body)
        guard case let .batch(_, _, _, _, events) = expected else {
            Issue.record("the reference refused a valid batch: \(expected)")
            return
        }
        #expect(events.allSatisfy { if case .decoded = $0 { true } else { false } })
        #expect(Self.current(body) == expected)
        #expect(Self.fastPathTaken(body), "a valid batch takes the specialised path (JSON reports event by event)")
    }

    @Test("A batch without app.id (the key's app) and with a sample rate decodes to what JSONDecoder gives, on the specialised path",
          arguments: Spelling.allCases)
    func appFromKeyAndSampleRate(spelling: Spelling) throws {
        var batch = Self.richBatch(count: 2)
        batch.app.id = nil
        batch.sampleRate = 0.1
        let body = try Self.encode(batch, compact: spelling.compactReports, formatting: spelling.formatting)
        #expect(!String(decoding: body, as: UTF8.self).contains(#""id":"shop""#), "an absent id is left out, not sent")
        let expected = Self.reference(body)
        guard case let .batch(_, app, _, rate, events) = expected else {
            Issue.record("the reference refused a batch without app.id: \(expected)")
            return
        }
        #expect(app.id == nil && app.version == "1.0" && rate == 0.1)
        #expect(events.allSatisfy { if case .decoded = $0 { true } else { false } })
        #expect(Self.current(body) == expected)
        #expect(Self.fastPathTaken(body))
    }

    @Test("The load test's batches take the specialised path")
    func loadTestShape() throws {
        var batch = makeBatch(id: "load", count: 100, start: 1_790_000_000)
        batch.device.installationId = nil
        let body = try Self.encode(batch)
        #expect(Self.fastPathTaken(body))
        #expect(Self.current(body) == Self.reference(body))
    }

    /// Hand-written bodies around one compact event, each a case where a second decoder
    /// could easily differ from `JSONDecoder`.
    static func handWrittenBodies() throws -> [(String, String)] {
        let batch = makeBatch(id: "hand", count: 1, start: 1_790_000_000)
        let encoder = JSONEncoder()
        encoder.userInfo[ScreenVisitEvent.compactReportsKey] = true
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let event = String(decoding: try encoder.encode(batch.events[0]), as: UTF8.self)
        let reportData = Base64.encode(batch.events[0].report.binaryEncoded())
        let envelope = #""app":{"build":"1","id":"shop","version":"1.0"},"device":{"maxRefreshRate":60,"model":"iPhone14,5","osName":"iOS","osVersion":"18.1"}"#
        func body(_ events: String, envelope: String = envelope, id: String = #""batchId":"b1""#) -> String {
            "{\(id),\(envelope),\"events\":[\(events)]}"
        }
        func edited(_ replace: String, with replacement: String) -> String {
            body(event.replacingOccurrences(of: replace, with: replacement))
        }
        let base = #"{"context":{"lowPowerMode":false,"network":"wifi","tags":{},"thermalState":"nominal"},"duration":DUR,"hangs":[],"kind":"screenVisit","reportData":"REPORT","screen":"Feed","startedAt":"2026-09-21T12:00:00.000Z"}"#
            .replacingOccurrences(of: "REPORT", with: reportData)
        func withDuration(_ text: String) -> String { body(base.replacingOccurrences(of: "DUR", with: text)) }
        var cases: [(String, String)] = [
            ("plain", body(event)),
            ("two events", body(event + "," + event)),
            ("no events", body("")),
            ("not JSON", "{nope"),
            ("empty", ""),
            ("array at top", "[" + event + "]"),
            ("trailing comma in events", body(event + ",")),
            ("trailing garbage", body(event) + "x"),
            ("trailing whitespace", body(event) + " \n\t"),
            ("leading whitespace", " \r\n" + body(event)),
            ("byte order mark", "\u{FEFF}" + body(event)),
            ("missing app", #"{"batchId":"x","events":[]}"#),
            ("batchId a number", body(event, id: #""batchId":7"#)),
            ("batchId null", body(event, id: #""batchId":null"#)),
            ("duplicate batchId", body(event, id: #""batchId":"a","batchId":"b""#)),
            ("unknown envelope key", body(event, id: #""batchId":"b1","extra":{"a":[1,2.5e3,true,null,"x"]}"#)),
            ("maxRefreshRate 60.0", body(event, envelope: envelope.replacingOccurrences(of: "60", with: "60.0"))),
            ("maxRefreshRate 6e1", body(event, envelope: envelope.replacingOccurrences(of: "60", with: "6e1"))),
            ("maxRefreshRate huge", body(event, envelope: envelope.replacingOccurrences(of: "60", with: "99999999999999999999"))),
            ("maxRefreshRate -0", body(event, envelope: envelope.replacingOccurrences(of: "60", with: "-0"))),
            ("maxRefreshRate string", body(event, envelope: envelope.replacingOccurrences(of: "60", with: "\"60\""))),
            ("maxRefreshRate leading zero", body(event, envelope: envelope.replacingOccurrences(of: "60", with: "060"))),
            ("installationId null", body(event, envelope: envelope.replacingOccurrences(of: "\"osVersion\":\"18.1\"", with: "\"osVersion\":\"18.1\",\"installationId\":null"))),
            ("app without id", body(event, envelope: envelope.replacingOccurrences(of: #""id":"shop","#, with: ""))),
            ("app id null", body(event, envelope: envelope.replacingOccurrences(of: #""id":"shop""#, with: #""id":null"#))),
            ("app id number", body(event, envelope: envelope.replacingOccurrences(of: #""id":"shop""#, with: #""id":7"#))),
            ("duplicate app id", body(event, envelope: envelope.replacingOccurrences(of: #""id":"shop""#, with: #""id":"shop","id":null"#))),
            ("sampleRate 0.1", body(event, id: #""batchId":"b1","sampleRate":0.1"#)),
            ("sampleRate 1", body(event, id: #""batchId":"b1","sampleRate":1"#)),
            ("sampleRate 1e-3", body(event, id: #""batchId":"b1","sampleRate":1e-3"#)),
            ("sampleRate 0", body(event, id: #""batchId":"b1","sampleRate":0"#)),
            ("sampleRate -0.5", body(event, id: #""batchId":"b1","sampleRate":-0.5"#)),
            ("sampleRate 2", body(event, id: #""batchId":"b1","sampleRate":2"#)),
            ("sampleRate null", body(event, id: #""batchId":"b1","sampleRate":null"#)),
            ("sampleRate after events", String(body(event).dropLast()) + #","sampleRate":0.5}"#),
            ("sampleRate string", body(event, id: #""batchId":"b1","sampleRate":"0.1""#)),
            ("sampleRate true", body(event, id: #""batchId":"b1","sampleRate":true"#)),
            ("sampleRate object", body(event, id: #""batchId":"b1","sampleRate":{}"#)),
            ("sampleRate 1e400", body(event, id: #""batchId":"b1","sampleRate":1e400"#)),
            ("duplicate sampleRate", body(event, id: #""batchId":"b1","sampleRate":0.1,"sampleRate":1"#)),
            ("installationId number", body(event, envelope: envelope.replacingOccurrences(of: "\"osVersion\":\"18.1\"", with: "\"osVersion\":\"18.1\",\"installationId\":5"))),
            ("escaped key", body(event, id: #""batch\u0049d":"b1""#)),
            ("escaped values", body(event, id: #""batchId":"b\u0031""#)),
            ("event null", body("null")),
            ("event number", body("3," + event)),
            ("event empty object", body("{}")),
            ("missing screen", body(base.replacingOccurrences(of: "DUR", with: "1").replacingOccurrences(of: #""screen":"Feed","#, with: ""))),
            ("screen null", body(base.replacingOccurrences(of: "DUR", with: "1").replacingOccurrences(of: #""screen":"Feed""#, with: #""screen":null"#))),
            ("duplicate screen", body(base.replacingOccurrences(of: "DUR", with: "1").replacingOccurrences(of: #""screen":"Feed""#, with: #""screen":"Feed","screen":"Home""#))),
            ("unicode escapes", body(base.replacingOccurrences(of: "DUR", with: "1").replacingOccurrences(of: #""screen":"Feed""#, with: #""screen":"F\u00e9ed \ud83d\ude80 \/ \b\f\n\r\t\"\\""#))),
            ("lone high surrogate", body(base.replacingOccurrences(of: "DUR", with: "1").replacingOccurrences(of: #""screen":"Feed""#, with: #""screen":"\ud83d""#))),
            ("lone low surrogate", body(base.replacingOccurrences(of: "DUR", with: "1").replacingOccurrences(of: #""screen":"Feed""#, with: #""screen":"\ude80x""#))),
            ("bad escape", body(base.replacingOccurrences(of: "DUR", with: "1").replacingOccurrences(of: #""screen":"Feed""#, with: #""screen":"\x""#))),
            ("short unicode escape", body(base.replacingOccurrences(of: "DUR", with: "1").replacingOccurrences(of: #""screen":"Feed""#, with: #""screen":"\u12""#))),
            ("raw control character", body(base.replacingOccurrences(of: "DUR", with: "1").replacingOccurrences(of: #""screen":"Feed""#, with: "\"screen\":\"a\u{1}b\""))),
            ("raw non-ASCII", body(base.replacingOccurrences(of: "DUR", with: "1").replacingOccurrences(of: #""screen":"Feed""#, with: #""screen":"Préférences 🚀""#))),
            ("empty screen", body(base.replacingOccurrences(of: "DUR", with: "1").replacingOccurrences(of: #""screen":"Feed""#, with: #""screen":"""#))),
            ("kind other", body(base.replacingOccurrences(of: "DUR", with: "1").replacingOccurrences(of: "screenVisit", with: "tap"))),
            ("unknown network", body(base.replacingOccurrences(of: "DUR", with: "1").replacingOccurrences(of: "wifi", with: "5g"))),
            ("lowPowerMode 0", body(base.replacingOccurrences(of: "DUR", with: "1").replacingOccurrences(of: "false", with: "0"))),
            ("lowPowerMode fals", body(base.replacingOccurrences(of: "DUR", with: "1").replacingOccurrences(of: "false", with: "fals"))),
            ("tags", body(base.replacingOccurrences(of: "DUR", with: "1").replacingOccurrences(of: #""tags":{}"#, with: #""tags":{"a":"b","\u00e9":"\n","c d":""}"#))),
            ("duplicate tag", body(base.replacingOccurrences(of: "DUR", with: "1").replacingOccurrences(of: #""tags":{}"#, with: #""tags":{"a":"b","a":"c"}"#))),
            ("tag value number", body(base.replacingOccurrences(of: "DUR", with: "1").replacingOccurrences(of: #""tags":{}"#, with: #""tags":{"a":1}"#))),
            ("tags missing", body(base.replacingOccurrences(of: "DUR", with: "1").replacingOccurrences(of: #","tags":{}"#, with: ""))),
            ("hangs", body(base.replacingOccurrences(of: "DUR", with: "10").replacingOccurrences(of: #""hangs":[]"#, with: #""hangs":[{"offset":0.5,"duration":1.25},{"duration":3,"offset":0}]"#))),
            ("hang missing offset", body(base.replacingOccurrences(of: "DUR", with: "10").replacingOccurrences(of: #""hangs":[]"#, with: #""hangs":[{"duration":1}]"#))),
            ("hang offset string", body(base.replacingOccurrences(of: "DUR", with: "10").replacingOccurrences(of: #""hangs":[]"#, with: #""hangs":[{"offset":"1","duration":1}]"#))),
            ("hangs null", body(base.replacingOccurrences(of: "DUR", with: "10").replacingOccurrences(of: #""hangs":[]"#, with: #""hangs":null"#))),
            ("hangs missing", body(base.replacingOccurrences(of: "DUR", with: "10").replacingOccurrences(of: #""hangs":[],"#, with: ""))),
            ("resources", body(base.replacingOccurrences(of: "DUR", with: "10").replacingOccurrences(of: #""hangs":[]"#, with: #""hangs":[],"resources":{"cpuPercent":{"min":1,"mean":2,"max":3},"residentBytes":{"min":1e8,"mean":2E8,"max":3.5e+8},"samples":4}"#))),
            ("mainThreadHitches", body(base.replacingOccurrences(of: "DUR", with: "10").replacingOccurrences(of: #""hangs":[]"#, with: #""hangs":[],"mainThreadHitches":{"frames":3,"hitchTime":0.25}"#))),
            ("mainThreadHitches null", body(base.replacingOccurrences(of: "DUR", with: "10").replacingOccurrences(of: #""hangs":[]"#, with: #""hangs":[],"mainThreadHitches":null"#))),
            ("mainThreadHitches negative", body(base.replacingOccurrences(of: "DUR", with: "10").replacingOccurrences(of: #""hangs":[]"#, with: #""hangs":[],"mainThreadHitches":{"frames":-1,"hitchTime":0.25}"#))),
            ("resources null", body(base.replacingOccurrences(of: "DUR", with: "10").replacingOccurrences(of: #""hangs":[]"#, with: #""hangs":[],"resources":null"#))),
            ("resources samples 4.0", body(base.replacingOccurrences(of: "DUR", with: "10").replacingOccurrences(of: #""hangs":[]"#, with: #""hangs":[],"resources":{"cpuPercent":{"min":1,"mean":2,"max":3},"residentBytes":{"min":1,"mean":2,"max":3},"samples":4.0}"#))),
            ("resources missing max", body(base.replacingOccurrences(of: "DUR", with: "10").replacingOccurrences(of: #""hangs":[]"#, with: #""hangs":[],"resources":{"cpuPercent":{"min":1,"mean":2},"residentBytes":{"min":1,"mean":2,"max":3},"samples":4}"#))),
            ("motionData null", body(base.replacingOccurrences(of: "DUR", with: "10").replacingOccurrences(of: #""hangs":[]"#, with: #""hangs":[],"motionData":null"#))),
            ("motionData", body(base.replacingOccurrences(of: "DUR", with: "10").replacingOccurrences(of: #""hangs":[]"#, with: #""hangs":[],"motionData":"\#(reportData)""#))),
            ("motion null beats motionData", body(base.replacingOccurrences(of: "DUR", with: "10").replacingOccurrences(of: #""hangs":[]"#, with: #""hangs":[],"motion":null,"motionData":"\#(reportData)""#))),
            ("motion null beats bad motionData", body(base.replacingOccurrences(of: "DUR", with: "10").replacingOccurrences(of: #""hangs":[]"#, with: #""hangs":[],"motion":null,"motionData":"!!""#))),
            ("motionData number", body(base.replacingOccurrences(of: "DUR", with: "10").replacingOccurrences(of: #""hangs":[]"#, with: #""hangs":[],"motionData":5"#))),
            ("motionData not base64", body(base.replacingOccurrences(of: "DUR", with: "10").replacingOccurrences(of: #""hangs":[]"#, with: #""hangs":[],"motionData":"abc""#))),
            ("reportData not base64", body(base.replacingOccurrences(of: "DUR", with: "10").replacingOccurrences(of: reportData, with: "@@@@"))),
            ("reportData not a report", body(base.replacingOccurrences(of: "DUR", with: "10").replacingOccurrences(of: reportData, with: "AAAA"))),
            ("reportData null", body(base.replacingOccurrences(of: "DUR", with: "10").replacingOccurrences(of: "\"\(reportData)\"", with: "null"))),
            ("reportData escaped slashes", body(base.replacingOccurrences(of: "DUR", with: "10").replacingOccurrences(of: reportData, with: reportData.replacingOccurrences(of: "/", with: "\\/")))),
            ("report null and reportData", body(base.replacingOccurrences(of: "DUR", with: "10").replacingOccurrences(of: #""hangs":[]"#, with: #""hangs":[],"report":null"#))),
            ("report object", edited(#""reportData""#, with: #""report":{"frames":1},"reportDataX""#)),
            ("unknown event key", body(base.replacingOccurrences(of: "DUR", with: "10").replacingOccurrences(of: #""hangs":[]"#, with: #""hangs":[],"extra":[[[{}]]],"more":"\u00e9""#))),
            ("deep nesting", body(event, id: #""batchId":"b1","deep":"# + String(repeating: "[", count: 600) + String(repeating: "]", count: 600))),
            ("bad UTF-8 in an unknown key's value", body(event, id: #""batchId":"b1","x":"BADBYTE""#)),
            ("bad UTF-8 in the screen", body(base.replacingOccurrences(of: "DUR", with: "1").replacingOccurrences(of: #""screen":"Feed""#, with: #""screen":"FeBADBYTEd""#))),
        ]
        for text in ["0", "-0", "-0.0", "0.0", "1", "10", "1.5", "1e0", "1E+0", "1e-0", "2.5e1", "1e400", "-1e400", "1e-400", "0e500",
                     "0.000", "01", "1.", ".5", "-", "+1", "1e", "1e+", "NaN", "Infinity", "0.1", "2.2250738585072011e-308",
                     "4.9e-324", "1e-320", "123456789012345678901234567890", "86400.000000000001", "1.7976931348623157e308",
                     "1.7976931348623159e308", "3.14159265358979323846264338327950288", "true", "null", "\"1\""] {
            cases.append(("duration \(text)", withDuration(text)))
        }
        return cases
    }

    /// The hand-written bodies the specialised decoder settles without handing the whole
    /// body to JSONDecoder: those it reads itself, and those with an event it hands to
    /// JSONDecoder alone that decodes there (`4.0` for an `Int`, an unknown member). A
    /// repeated member, or an unknown one in the envelope, sends the whole body to
    /// JSONDecoder and the repeated-member check.
    static let takesFastPath: Set<String> = [
        "plain", "two events", "no events", "trailing whitespace", "leading whitespace", "maxRefreshRate -0",
        "installationId null", "app without id", "app id null", "sampleRate 0.1", "sampleRate 1", "sampleRate 1e-3", "sampleRate 0",
        "sampleRate -0.5", "sampleRate 2", "sampleRate null", "sampleRate after events", "escaped values", "unicode escapes", "raw non-ASCII", "empty screen", "kind other", "tags", "hangs",
        "resources", "resources null", "mainThreadHitches", "mainThreadHitches null", "motionData null", "motionData", "motion null beats motionData", "motion null beats bad motionData",
        "reportData escaped slashes", "unknown event key", "resources samples 4.0",
        // A binary report refused is the event's rejection, worded as JSONDecoder words it.
        "reportData not base64", "reportData not a report", "motionData not base64",
        "duration 0", "duration -0", "duration -0.0", "duration 0.0", "duration 1", "duration 10", "duration 1.5", "duration 1e0",
        "duration 1E+0", "duration 1e-0", "duration 2.5e1", "duration 0e500", "duration 0.000", "duration 0.1",
        "duration 2.2250738585072011e-308", "duration 4.9e-324", "duration 1e-320", "duration 123456789012345678901234567890",
        "duration 86400.000000000001", "duration 1.7976931348623157e308", "duration 3.14159265358979323846264338327950288",
    ]

    @Test("Hand-written bodies, valid and invalid: the same batch, rejections or error as JSONDecoder")
    func handWritten() throws {
        for (name, text) in try Self.handWrittenBodies() {
            // BADBYTE stands for a lone UTF-8 continuation byte.
            var body = Array(text.utf8)
            if let marker = body.firstRange(of: Array("BADBYTE".utf8)) { body.replaceSubrange(marker, with: [0x80]) }
            #expect(Self.current(body) == Self.reference(body), "\(name)")
            #expect(Self.fastPathTaken(body) == Self.takesFastPath.contains(name), "fast path: \(name)")
        }
    }

    @Test("Every truncation of a batch gives JSONDecoder's error")
    func truncations() throws {
        let body = try Self.encode(Self.richBatch(count: 1))
        for length in 0..<body.count {
            let prefix = Array(body[0..<length])
            let current = Self.current(prefix)
            #expect(current == Self.reference(prefix), "truncated to \(length) bytes")
            if case .batch = current { Issue.record("a truncated body decoded (\(length) bytes)") }
        }
    }

    @Test("Random byte edits: the same result as JSONDecoder, and the fast path settles only what JSONDecoder decodes or rejects for a binary report")
    func randomEdits() throws {
        let body = try Self.encode(Self.richBatch(count: 2), formatting: .sortedKeys)
        let interesting = Array("\"\\,:{}[]0123456789-+.eEntfu /".utf8) + [0x00, 0x01, 0x1F, 0x7F, 0x80, 0xC3, 0xFF]
        var generator = SeededGenerator(seed: 2026)
        for trial in 0..<3000 {
            var edited = body
            for _ in 0..<(1 + Int(generator.next() % 3)) {
                let position = Int(generator.next() % UInt64(edited.count))
                switch generator.next() % 3 {
                case 0: edited[position] = interesting[Int(generator.next() % UInt64(interesting.count))]
                case 1: edited.remove(at: position)
                default: edited.insert(interesting[Int(generator.next() % UInt64(interesting.count))], at: position)
                }
            }
            let expected = Self.reference(edited)
            #expect(Self.current(edited) == expected, "trial \(trial)")
            if Self.fastPathTaken(edited) {
                // Every event decoded, or rejected for its binary report alone (which the
                // fast path settles as JSONDecoder does, issue 43 item 8).
                guard case let .batch(_, _, _, _, events) = expected, events.enumerated().allSatisfy({ index, event in
                    switch event {
                    case .decoded: true
                    case let .rejected(field, _): field == "events[\(index)].reportData" || field == "events[\(index)].motionData"
                    case .fatalHang: false
                    }
                }) else {
                    Issue.record("trial \(trial): the fast path settled a body JSONDecoder does not decode event by event")
                    continue
                }
            }
        }
    }

    @Test("Durations as JSONEncoder writes them decode to the same Double, bit for bit")
    func doubles() throws {
        var generator = SeededGenerator(seed: 7)
        var event = makeBatch(id: "d", count: 1, start: 1_790_000_000).events[0]
        let encoder = JSONEncoder()
        encoder.userInfo[ScreenVisitEvent.compactReportsKey] = true
        let special: [Double] = [0, -0.0, 1, 0.1, 1e-7, 1e22, .leastNonzeroMagnitude, 2.2250738585072014e-308, .greatestFiniteMagnitude, 86_400.000_000_001, 123.456]
        let random = (0..<2000).map { index -> Double in
            let bits = generator.next()
            let value = Double(bitPattern: bits)
            return value.isFinite ? value : Double(index) * 0.37
        }
        for value in special + random {
            event.duration = value
            let batch = EventBatch(batchId: "d", app: AppInfo(id: "shop", version: "1", build: "1"),
                                   device: DeviceInfo(model: "m", osName: "iOS", osVersion: "18", maxRefreshRate: 60), events: [event])
            let body = Array(try encoder.encode(batch))
            let current = Self.current(body)
            #expect(current == Self.reference(body), "\(value)")
            if case let .batch(_, _, _, _, events) = current, case let .decoded(decoded) = events.first {
                #expect(decoded.duration.bitPattern == value.bitPattern, "\(value)")
            }
            #expect(Self.fastPathTaken(body), "\(value)")
        }
    }

    @Test("A batch with invalid events is rejected event by event, by JSONDecoder, with its field paths")
    func invalidEvents() throws {
        var batch = makeBatch(id: "mixed", count: 3, start: 1_790_000_000)
        batch.events[1].screen = ""
        var body = try Self.encode(batch)
        let text = String(decoding: body, as: UTF8.self).replacingOccurrences(of: #""kind":"screenVisit""#, with: #""kind":7"#)
        body = Array(text.utf8)
        let current = Self.current(body)
        #expect(current == Self.reference(body))
        guard case let .batch(_, _, _, _, events) = current else {
            Issue.record("the batch was refused: \(current)")
            return
        }
        #expect(events.contains(.rejected(field: "events[0].kind", reason: "expected String")))
    }
}
