import Foundation
import FramescopeCore
import FramescopeSimulation
import Testing

@Suite("Reports and budgets as JSON")
struct CodingTests {
    func sampleReport() -> RecordingReport {
        let r = 1.0 / 60
        var analyzer = FrameAnalyzer()
        var t = 0.0
        analyzer.record(FrameTick(timestamp: t, targetTimestamp: t + r))
        for index in 0..<300 {
            if index == 100 { analyzer.beginSegment("scroll 1") }
            if index == 200 { analyzer.endSegment() }
            t += (index % 37 == 0 ? 3 : 1) * r
            if index == 250 { t += 0.5 }
            analyzer.record(FrameTick(timestamp: t, targetTimestamp: t + r))
        }
        return analyzer.report()
    }

    func object(_ data: Data) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test("The report JSON has every DESIGN §3 key, with null for metrics without data")
    func designKeys() throws {
        let data = try JSONEncoder().encode(sampleReport())
        let json = try object(data)
        for key in ["frames", "duration", "averageFPS", "firstFPS", "minFPS", "maxFPS", "droppedFrames", "dropEvents",
                    "maxDroppedFrames", "hitchTime", "hitchRatio", "hangs", "hangTime", "hangRate", "slowFrames",
                    "frozenFrames", "stability", "frameDuration", "refreshRates", "rejectedTicks", "motion", "segments"] {
            #expect(json[key] != nil, "missing \(key)")
        }
        let durations = try #require(json["frameDuration"] as? [String: Any])
        for key in ["p50", "p90", "p95", "p99", "max"] { #expect(durations[key] is Double, "frameDuration.\(key)") }
        #expect((json["refreshRates"] as? [String: Int])?["60"] == 300 - 1)
        let motion = try #require(json["motion"] as? [String: Any])
        #expect(motion["firstFPS"] is NSNull)
        let segments = try #require(json["segments"] as? [[String: Any]])
        #expect(segments.first?["label"] as? String == "scroll 1")

        let empty = try object(try JSONEncoder().encode(FrameAnalyzer().report()))
        for key in ["averageFPS", "firstFPS", "minFPS", "maxFPS", "hitchRatio", "hangRate", "stability", "maxDroppedFrames"] {
            #expect(empty[key] is NSNull, "\(key) should be null without data")
        }
        #expect(empty["motion"] is NSNull)
    }

    @Test("A report survives a JSON round trip exactly")
    func roundTrip() throws {
        let report = sampleReport()
        let decoded = try JSONDecoder().decode(RecordingReport.self, from: try JSONEncoder().encode(report))
        #expect(decoded == report)
        #expect(decoded.whole.hitchRatio == report.whole.hitchRatio)
    }

    @Test("The binary storage form round-trips exactly, is smaller than JSON, and refuses damaged bytes")
    func binaryRoundTrip() throws {
        var reports = [FrameReport(), sampleReport().whole, sampleReport().motion ?? FrameReport()]
        for seed in UInt64(1)...12 {
            var workload = SyntheticWorkload(profile: [.light, .moderate, .heavy][Int(seed % 3)], duration: 3, seed: seed)
            let display: DisplayMode = seed % 2 == 0 ? .variable(idleHz: 24, motionHz: 120) : .fixed(hz: 60)
            reports.append(PipelineSimulator(display: display, seed: seed).run(&workload).analyze().whole)
        }
        var merged = FrameReport()
        for report in reports { merged.merge(report) }
        reports.append(merged)
        for (index, report) in reports.enumerated() {
            let bytes = report.binaryEncoded()
            #expect(try FrameReport(binary: bytes) == report, "report \(index)")
            if report.frames > 100 { #expect(bytes.count * 3 < (try JSONEncoder().encode(report)).count, "report \(index): \(bytes.count) bytes") }
        }
        let bytes = merged.binaryEncoded()
        #expect(throws: BinaryReportError.self) { try FrameReport(binary: bytes.dropLast()) }
        #expect(throws: BinaryReportError.self) { try FrameReport(binary: bytes + [0]) }
        #expect(throws: BinaryReportError.self) { try FrameReport(binary: [2] + bytes.dropFirst()) }
        #expect(throws: BinaryReportError.self) { try FrameReport(binary: [UInt8]()) }
        // A count that contradicts the histogram is refused like the JSON form refuses it.
        var damaged = bytes
        damaged[1] = damaged[1] ^ 0x01
        #expect(throws: BinaryReportError.self) { try FrameReport(binary: damaged) }
        #expect(throws: BinaryReportError.self) { try FrameReport(binary: [1] + [UInt8](repeating: 0xFF, count: 20)) }
    }

    @Test("Events carry reports as JSON objects or as compact base64 binary; both decode to the same event")
    func compactReports() throws {
        let report = sampleReport()
        let event = ScreenVisitEvent(screen: "Feed", startedAt: "2026-11-01T10:00:00Z", duration: 12,
                                     context: VisitContext(network: .wifi, lowPowerMode: false), report: report.whole, motion: report.motion)
        let encoder = JSONEncoder()
        encoder.userInfo[ScreenVisitEvent.compactReportsKey] = true
        let compact = try encoder.encode(event)
        let plain = try JSONEncoder().encode(event)
        #expect(compact.count * 3 < plain.count, "\(compact.count) vs \(plain.count) bytes")
        let json = try object(compact)
        #expect(json["reportData"] is String && json["report"] == nil)
        #expect(try JSONDecoder().decode(ScreenVisitEvent.self, from: compact) == event)
        #expect(try JSONDecoder().decode(ScreenVisitEvent.self, from: plain) == event)
        var noMotion = event
        noMotion.motion = nil
        #expect(try JSONDecoder().decode(ScreenVisitEvent.self, from: encoder.encode(noMotion)) == noMotion)
        for bytes in [[UInt8](), [0], [1, 2], [0xFF, 0x10, 0x80], Array(0...255)] {
            #expect(Base64.decode(Base64.encode(bytes)) == bytes)
        }
        #expect(Base64.encode(Array("Man".utf8)) == "TWFu" && Base64.encode(Array("Ma".utf8)) == "TWE=")
        #expect(Base64.decode("TWF") == nil && Base64.decode("TW=u") == nil && Base64.decode("T*Fu") == nil)
        var damaged = json
        damaged["reportData"] = "AQID"
        let error = #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(ScreenVisitEvent.self, from: JSONSerialization.data(withJSONObject: damaged))
        }
        #expect(error?.fieldPath == "reportData")
        damaged["reportData"] = nil
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(ScreenVisitEvent.self, from: JSONSerialization.data(withJSONObject: damaged)) }
    }

    @Test("Decoding names the field that contradicts another", arguments: [
        ("dropEvents", 1_000_000, "dropEvents"),
        ("frames", 5, "frames"),
        ("hangs", 100_000, "hangs"),
        ("droppedFrames", 0, "dropEvents"),
        ("maxDroppedFrames", 1_000, "maxDroppedFrames"),
    ])
    func contradictions(key: String, value: Int, field: String) throws {
        var json = try object(try JSONEncoder().encode(sampleReport().whole))
        json[key] = value
        let data = try JSONSerialization.data(withJSONObject: json)
        do {
            _ = try JSONDecoder().decode(FrameReport.self, from: data)
            Issue.record("decoding should fail for \(key) = \(value)")
        } catch let DecodingError.dataCorrupted(context) {
            #expect(context.codingPath.last?.stringValue == field)
        }
    }

    @Test("Budgets read from JSON; unknown scopes, metrics and bounds are named")
    func budgetJSON() throws {
        let text = #"{"recording": {"hitchRatio": {"max": 5}, "averageFPS": {"min": 55}}, "eachSegment": {"dropEvents": {"max": 3}}, "motion": {"frameDuration.p95": {"max": 0.025}}}"#
        let budget = try JSONDecoder().decode(Budget.self, from: Data(text.utf8))
        #expect(Set(budget.recording) == [.max(.hitchRatio, 5), .min(.averageFPS, 55)])
        #expect(budget.eachSegment == [.max(.dropEvents, 3)])
        #expect(budget.motion == [.max(.frameDurationP95, 0.025)])
        let again = try JSONDecoder().decode(Budget.self, from: try JSONEncoder().encode(budget))
        #expect(Set(again.recording) == Set(budget.recording))

        for (bad, word) in [(#"{"everything": {}}"#, "everything"), (#"{"recording": {"hitchRate": {"max": 5}}}"#, "hitchRate"), (#"{"recording": {"hitchRatio": {"most": 5}}}"#, "most")] {
            do {
                _ = try JSONDecoder().decode(Budget.self, from: Data(bad.utf8))
                Issue.record("\(bad) should not decode")
            } catch let DecodingError.dataCorrupted(context) {
                #expect(context.debugDescription.contains(word))
            }
        }
    }

    @Test("Metric values and formats")
    func metricFormatting() {
        #expect(Metric.hitchRatio.format(12.345) == "12.3 ms/s")
        #expect(Metric.frameDurationP95.format(0.0167) == "16.7 ms")
        #expect(Metric.stability.format(0.871) == "87.1 %")
        #expect(Metric.dropEvents.describe(1) == "1 drop event")
        #expect(Metric.averageFPS.describe(53.44) == "average 53.4 FPS")
        #expect(Metric.decimal(-0.04, digits: 1) == "0.0")
        #expect(Metric.decimal(2.05, digits: 2) == "2.05")
        #expect(Metric.allCases.count == Set(Metric.allCases.map(\.rawValue)).count)
    }
}
