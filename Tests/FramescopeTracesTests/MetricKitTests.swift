import Foundation
import FramescopeCore
import FramescopeTraces
import Testing

/// MetricKit payload JSON: the three corpus payloads (ChimeHQ/Meter, BSD-3-Clause) and
/// metric-payload fixtures in the shape of Apple's `MXMetricPayload.jsonRepresentation()`
/// documentation (no licensed metric payload was found: ../shared/corpus/SOURCES.md).
@Suite("Trace readers: MetricKit")
struct MetricKitTests {
    static var corpus: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("shared/corpus/metrickit")
    }

    func analyze(_ bytes: [UInt8], format: TraceFormat? = nil) throws(TraceError) -> (report: RecordingReport, notes: [String]) {
        var source = MemoryByteSource(bytes, chunkSize: 97)
        var notes: [String] = []
        let report = try TraceReader(file: "payload.json").analyze(from: &source, format: format, note: { notes.append($0) })
        return (report, notes)
    }

    func payloads(_ text: String) throws(TraceError) -> [MetricKitPayload] {
        var source = MemoryByteSource(text, chunkSize: 5)
        var read: [MetricKitPayload] = []
        try MetricKitParser(file: "payload.json").read(from: &source) { payload, _ in read.append(payload) }
        return read
    }

    static let metricPayloads = """
    [{"timeStampBegin": "2022-11-14 00:00:00", "timeStampEnd": "2022-11-14 23:59:00", "latestApplicationVersion": "3.1",
      "metaData": {"appBuildVersion": "31", "osVersion": "iPhone OS 16.0.2 (20A380)", "deviceType": "iPhone11,8", "regionFormat": "US"},
      "cpuMetrics": {"cumulativeCPUTime": "100 sec"},
      "animationMetrics": {"scrollHitchTimeRatio": "12.5 ms per s"},
      "applicationResponsivenessMetrics": {"histogrammedAppHangTime": {"histogramNumBuckets": 3, "histogramValue": {
        "0": {"bucketCount": 50, "bucketStart": "0 ms", "bucketEnd": "100 ms"},
        "1": {"bucketCount": 6, "bucketStart": "250 ms", "bucketEnd": "500 ms"},
        "2": {"bucketCount": 2, "bucketStart": "500 ms", "bucketEnd": "1000 ms"}}}}},
     {"timeStampBegin": "2022-11-15 00:00:00 +0100", "timeStampEnd": "2022-11-15 23:59:00 +0100",
      "metaData": {"appVersion": "3.2", "osVersion": "iPhone OS 16.1 (20B82)", "deviceType": "iPhone14,2"},
      "animationMetrics": {"scrollHitchTimeRatio": "4 ms per s"},
      "hangDiagnostics": [{"callStackTree": {"callStacks": []}, "diagnosticMetaData": {"hangDuration": "1.5 sec"}},
                          {"diagnosticMetaData": {"hangDuration": "300 ms"}}]}]
    """

    @Test("Xcode's simulated iOS 14 payload: one hang of 20 s ('20 secs.') is one hang in the report; the other diagnostics are counted in a note")
    func simulatedIOS() throws {
        let (report, notes) = try analyze(Array(try Data(contentsOf: Self.corpus.appendingPathComponent("meter_xcode-simulated_ios14_diagnostic-payload.json"))))
        #expect(report.whole.frames == 1)
        #expect(report.whole.hangs == 1)
        #expect(report.whole.hangTime == 20)
        #expect(report.toolFigures.first { $0.label == "Hang diagnostics" }?.value == 1)
        #expect(report.toolFigures.first { $0.label == "Longest hang diagnostic" }?.value == 20_000)
        #expect(notes.contains("payload 1: 2020-10-10 19:35 UTC, iPhone OS 14.0.1 (18A393), iPhone10,2, app 1.0 (1)"), "\(notes)")
        #expect(notes.contains("not about frames, so not read: 1 crash diagnostic, 1 cpu exception diagnostic, 1 disk write exception diagnostic"), "\(notes)")
    }

    @Test("Xcode's simulated macOS 13 payload: '20 sec' and times without a zone read the same way")
    func simulatedMacOS() throws {
        let (report, notes) = try analyze(Array(try Data(contentsOf: Self.corpus.appendingPathComponent("meter_xcode-simulated_macos13_diagnostic-payload.json"))))
        #expect(report.whole.hangs == 1)
        #expect(report.whole.hangTime == 20)
        #expect(notes.contains { $0.hasPrefix("payload 1: 2022-09-28 10:59 UTC, macOS 13.0 (22A5358e), MacBookPro18,3, app com.chimehq.Edit") }, "\(notes)")
    }

    @Test("A real payload of two crashes and no hangs: a report of no frames, said in a note, not an error")
    func realCrashPayload() throws {
        let (report, notes) = try analyze(Array(try Data(contentsOf: Self.corpus.appendingPathComponent("meter_real_ios14_crash-diagnostic-payload.json"))))
        #expect(report.whole.frames == 0)
        #expect(report.toolFigures.first { $0.label == "Hang diagnostics" }?.value == 0)
        #expect(notes.contains("not about frames, so not read: 2 crash diagnostics"), "\(notes)")
        #expect(notes.contains { $0.contains("the report has no frames") })
    }

    @Test("Metric payloads in a list: Apple's hitch ratio per payload, the hang histogram summed by bucket, hang diagnostics as frames")
    func metricPayloadList() throws {
        let read = try payloads(Self.metricPayloads)
        #expect(read.count == 2)
        #expect(read[0].scrollHitchTimeRatio == 12.5)
        #expect(read[0].appVersion == "3.1")  // latestApplicationVersion when metaData has none
        #expect(read[0].begin == 1_668_384_000)
        #expect(read[0].hangTimeHistogram == [MetricKitBucket(start: 0, end: 0.1, count: 50), MetricKitBucket(start: 0.25, end: 0.5, count: 6), MetricKitBucket(start: 0.5, end: 1, count: 2)])
        #expect(read[0].histogramHangs == 58)
        #expect(read[1].begin == 1_668_466_800)  // 2022-11-15 00:00 +0100 is 2022-11-14 23:00 UTC
        #expect(read[1].appVersion == "3.2")
        #expect(read[1].hangDurations == [1.5, 0.3])
        let (report, _) = try analyze(Array(Self.metricPayloads.utf8))
        #expect(report.whole.hangs == 2)
        #expect(report.toolFigures.map(\.label) == [
            "Hang diagnostics", "Longest hang diagnostic",
            "Scroll hitch time ratio, 2022-11-14 00:00 UTC – 2022-11-14 23:59 UTC",
            "Scroll hitch time ratio, 2022-11-14 23:00 UTC – 2022-11-15 22:59 UTC",
            "App hang time 0–100 ms", "App hang time 250–500 ms", "App hang time 500–1000 ms",
        ])
    }

    @Test("Unreadable or impossible values are skipped with their path and line; the rest of the payload counts")
    func badValuesSkipped() throws {
        let text = """
        {"timeStampBegin": "yesterday", "timeStampEnd": "2022-11-14 23:59:00",
         "animationMetrics": {"scrollHitchTimeRatio": "5000 ms per s"},
         "applicationResponsivenessMetrics": {"histogrammedAppHangTime": {"histogramValue": {
           "0": {"bucketCount": -3, "bucketStart": "0 ms", "bucketEnd": "100 ms"},
           "1": {"bucketCount": 4, "bucketStart": "900 ms", "bucketEnd": "100 ms"},
           "2": {"bucketCount": 1, "bucketStart": "250 ms", "bucketEnd": "500 ms"}}}},
         "hangDiagnostics": [{"diagnosticMetaData": {"hangDuration": "20 parsecs"}}, {"diagnosticMetaData": {}},
                             {"diagnosticMetaData": {"hangDuration": "2 days"}}, {"diagnosticMetaData": {"hangDuration": "1e400 s"}},
                             {"diagnosticMetaData": {"hangDuration": "0.4 s"}}]}
        """
        let read = try payloads(text)
        #expect(read.count == 1)
        let payload = try #require(read.first)
        #expect(payload.begin == nil)
        #expect(payload.end == 1_668_470_340)
        #expect(payload.scrollHitchTimeRatio == nil)
        #expect(payload.hangTimeHistogram == [MetricKitBucket(start: 0.25, end: 0.5, count: 1)])
        #expect(payload.hangDurations == [0.4])
        #expect(payload.issues.map(\.field) == [
            "timeStampBegin", "animationMetrics.scrollHitchTimeRatio",
            "applicationResponsivenessMetrics.histogrammedAppHangTime.histogramValue.0.bucketCount",
            "applicationResponsivenessMetrics.histogrammedAppHangTime.histogramValue.1",
            "hangDiagnostics[0].diagnosticMetaData.hangDuration", "hangDiagnostics[1].diagnosticMetaData.hangDuration",
            "hangDiagnostics[2].diagnosticMetaData.hangDuration", "hangDiagnostics[3].diagnosticMetaData.hangDuration",
        ])
        #expect(payload.issues[1].line == 2)
        let (_, notes) = try analyze(Array(text.utf8))
        #expect(notes.contains("line 7: hangDiagnostics[0].diagnosticMetaData.hangDuration: '20 parsecs' is not a duration like '20 sec'; skipped"), "\(notes)")
    }

    @Test("Measurements: MetricKit's spellings of durations and ratios, and its times with and without a zone")
    func measurements() {
        #expect(MetricKitMeasurement.seconds("20 secs.") == 20)
        #expect(MetricKitMeasurement.seconds("20 sec") == 20)
        #expect(MetricKitMeasurement.seconds("20000 ms") == 20)
        #expect(MetricKitMeasurement.seconds("1.5 min") == 90)
        #expect(MetricKitMeasurement.seconds("-1 s") == nil)
        #expect(MetricKitMeasurement.seconds("1,5 s") == nil)
        #expect(MetricKitMeasurement.seconds("20") == nil)
        #expect(MetricKitMeasurement.millisecondsPerSecond("1000 ms per s") == 1000)
        #expect(MetricKitMeasurement.millisecondsPerSecond("2 ms/s") == 2)
        #expect(MetricKitMeasurement.millisecondsPerSecond("0.01 s per s") == 10)
        #expect(MetricKitMeasurement.millisecondsPerSecond("3 ms per parsec") == nil)
        #expect(MetricKitMeasurement.unixTime("1970-01-01 00:00:00 +0000") == 0)
        #expect(MetricKitMeasurement.unixTime("2020-10-10 19:35:24 +0000") == 1_602_358_524)
        #expect(MetricKitMeasurement.unixTime("2022-09-28 10:59:30") == 1_664_362_770)
        #expect(MetricKitMeasurement.unixTime("2024-02-29 12:00:00 -0130") == 1_709_213_400)
        #expect(MetricKitMeasurement.unixTime("2022-13-01 00:00:00") == nil)
        #expect(MetricKitMeasurement.unixTime("2022-09-28") == nil)
    }

    @Test("Detection: a payload object or list is MetricKit; Framescope's JSON and Chrome's lists are not")
    func detection() {
        #expect(TraceFormat.detect(prefix: Array(#"{"timeStampEnd": "x"}"#.utf8)) == .metricKit)
        #expect(TraceFormat.detect(prefix: Array(" [ {\"crashDiagnostics\": []}]".utf8)) == .metricKit)
        #expect(TraceFormat.detect(prefix: Array(#"{"animationMetrics": {}}"#.utf8)) == .metricKit)
        #expect(TraceFormat.detect(prefix: Array(#"{"refreshRate": 60, "ticks": []}"#.utf8)) == .json)
        #expect(TraceFormat.detect(prefix: Array(#"[{"name": "BeginFrame", "ph": "I"}]"#.utf8)) == .chrome)
    }

    @Test("Not JSON, an empty list, or a list of numbers is a data error naming the line")
    func refusals() {
        for (text, expected) in [("[]", "no MetricKit payload"), ("{\"timeStampEnd\": ", "file ends"), ("[1, 2]", "expected a MetricKit payload object")] {
            #expect {
                _ = try analyze(Array(text.utf8), format: .metricKit)
            } throws: { error in
                guard let error = error as? TraceError else { return false }
                return error.kind == .data && error.message.contains(expected)
            }
        }
    }
}
