import FramescopeCore
import Foundation

/// The envelope every batch carries (the app, the device, the sample rate), spliced around
/// the visits' JSON, and kept in a file so visits a killed process left go out under the
/// envelope they were measured under.
extension VisitBatchQueue {
    /// The upload body: the envelope around the events' JSON, spliced without re-encoding.
    /// - Parameter sampleRate: The share of installations that measure (0–1), if sampling.
    static func body(batchId: String, app: [UInt8], device: [UInt8], sampleRate: Double? = nil, events: [[UInt8]]) -> [UInt8] {
        var body = Array(#"{"batchId":""#.utf8)
        body.append(contentsOf: batchId.utf8)
        body.append(contentsOf: #"","app":"#.utf8)
        body.append(contentsOf: app)
        body.append(contentsOf: #","device":"#.utf8)
        body.append(contentsOf: device)
        if let sampleRate, sampleRate > 0, sampleRate <= 1 {
            // Swift's shortest round-trip form ("0.1", "1e-05") is valid JSON.
            body.append(contentsOf: #","sampleRate":"#.utf8)
            body.append(contentsOf: "\(sampleRate)".utf8)
        }
        body.append(contentsOf: #","events":["#.utf8)
        for (index, event) in events.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body.append(contentsOf: event)
        }
        body.append(contentsOf: "]}".utf8)
        return body
    }

    /// The envelope as a file: `{"app": …, "device": …, "sampleRate": …}`.
    private struct SavedEnvelope: Codable {
        var app: AppInfo
        var device: DeviceInfo
        var sampleRate: Double?
    }

    /// The envelope an earlier process saved, re-encoded as this one encodes, or nil.
    static func savedEnvelope(at url: URL, encoder: JSONEncoder) -> (app: [UInt8], device: [UInt8], sampleRate: Double?)? {
        guard let data = FileManager.default.contents(atPath: url.path),
              let saved = try? JSONDecoder().decode(SavedEnvelope.self, from: data),
              let app = try? encoder.encode(saved.app), let device = try? encoder.encode(saved.device) else { return nil }
        return (Array(app), Array(device), saved.sampleRate)
    }

    /// Writes `envelope` to `url`, its JSON parts spliced as a batch's are (best effort:
    /// without it, recovered visits go out under the next launch's envelope, as before it
    /// existed).
    static func save(_ envelope: (app: [UInt8], device: [UInt8], sampleRate: Double?), to url: URL) {
        var bytes = Array(#"{"app":"#.utf8) + envelope.app + Array(#","device":"#.utf8) + envelope.device
        if let rate = envelope.sampleRate, rate > 0, rate <= 1 { bytes += Array(#","sampleRate":\#(rate)"#.utf8) }
        bytes.append(UInt8(ascii: "}"))
        try? Data(bytes).write(to: url, options: .atomic)
    }
}
