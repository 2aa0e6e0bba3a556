import FramescopeJSON

/// Reads the body of `PUT /v1/apps/{app}/thresholds` strictly, naming the field at fault:
///
/// ```json
/// {"bands": {"hitchRatio": {"goodBelow": 4, "criticalAbove": 8}, "hangRate": null},
///  "verdict": {"minimumChange": 0.1, "minimumVisits": 50}, "alerts": {"minimumInstallations": 50}}
/// ```
///
/// Every key is optional; `null` or an absent key leaves that setting at its default. An
/// unknown or repeated key, a band without both limits, a string, `NaN` or a number out of
/// `Double`'s range (`1e400`) where a number belongs, and a fraction where a whole number
/// belongs are refused with the field's path (`bands.hitchRatio.goodBelow`); then the
/// values are checked against physics (``AppThresholds/problem()``).
enum ThresholdsBody {
    /// The largest body accepted, in bytes (16 KiB; a full body is about 500 bytes).
    static let maximumBytes = 16 * 1024

    /// What is wrong with a body: `invalid_json` where the JSON itself breaks off,
    /// `invalid_field` where a field's value is wrong; `field` names it when known.
    struct Failure: Error, Hashable {
        /// The error code the route answers with.
        var errorCode: CollectorError.Code
        var field: String?
        var message: String

        init(_ errorCode: CollectorError.Code, field: String?, message: String) {
            self.errorCode = errorCode
            self.field = field
            self.message = message
        }

        /// The code as sent (`invalid_field`).
        var code: String { errorCode.rawValue }
    }

    /// The settings in `bytes`, checked.
    static func decode(_ bytes: UnsafeRawBufferPointer) throws(Failure) -> AppThresholds {
        var reader = Reader(scanner: JSONScanner(bytes: bytes))
        let settings: AppThresholds
        do {
            settings = try reader.body()
        } catch let failure as Failure {
            throw failure
        } catch let error as JSONScanError {
            throw Failure(.invalidJSON, field: reader.path,
                          message: "the body is not valid JSON at byte \(error.offset): \(error.message)")
        } catch {
            throw Failure(.invalidJSON, field: reader.path, message: "the body is not valid JSON")
        }
        if let problem = settings.problem() {
            throw Failure(.invalidField, field: problem.field, message: problem.message)
        }
        return settings
    }

    /// The scanner and the path of the member being read (for errors).
    struct Reader {
        var scanner: JSONScanner
        var path: String?

        mutating func body() throws -> AppThresholds {
            scanner.skipWhitespace()
            guard scanner.index < scanner.bytes.count else {
                throw Failure(.invalidJSON, field: nil, message: "the body is empty; send a JSON object such as {\"bands\": {\"hitchRatio\": {\"goodBelow\": 5, \"criticalAbove\": 10}}}")
            }
            guard scanner.peek() == UInt8(ascii: "{") else {
                throw Failure(.invalidJSON, field: nil, message: "the body must be a JSON object with bands, verdict and alerts")
            }
            var settings = AppThresholds()
            try members(of: nil, allowed: ["bands", "verdict", "alerts"]) { reader, key in
                switch key {
                case "bands": try reader.bands(into: &settings)
                case "verdict": try reader.verdict(into: &settings)
                default: try reader.alerts(into: &settings)
                }
            }
            path = nil
            try scanner.end()
            return settings
        }

        /// Reads the object at `parent` member by member, refusing keys not in `allowed`
        /// and repeated keys; `read` reads each member's value.
        mutating func members(of parent: String?, allowed: [String], _ read: (inout Reader, String) throws -> Void) throws {
            path = parent
            try scanner.beginObject()
            guard !scanner.isEmptyObject() else { return }
            var seen: Set<String> = []
            repeat {
                path = parent
                let range = try scanner.key()
                let key = String(decoding: UnsafeRawBufferPointer(rebasing: scanner.bytes[range]), as: UTF8.self)
                let field = parent.map { "\($0).\(key.prefix(64))" } ?? String(key.prefix(64))
                guard allowed.contains(key) else {
                    throw Failure(.invalidField, field: field,
                                  message: "unknown field '\(key.prefix(64))'; \(parent ?? "the body") may hold \(allowed.joined(separator: ", "))")
                }
                guard seen.insert(key).inserted else {
                    throw Failure(.invalidField, field: field, message: "'\(key)' appears twice")
                }
                path = field
                try read(&self, key)
                path = parent
            } while try scanner.nextMember()
            path = parent
        }

        /// Whether the value coming is `null` (read), or an object (not read); anything
        /// else is refused for `field`.
        mutating func nullOrObject(_ field: String, _ what: String) throws -> Bool {
            path = field
            scanner.skipWhitespace()
            if try scanner.null() { return true }
            guard scanner.peek() == UInt8(ascii: "{") else {
                throw Failure(.invalidField, field: field, message: "\(field) must be \(what), or null")
            }
            return false
        }

        mutating func bands(into settings: inout AppThresholds) throws {
            guard try !nullOrObject("bands", "an object of bands by figure name") else { return }
            try members(of: "bands", allowed: ThresholdFigure.allCases.map(\.rawValue)) { reader, key in
                guard let figure = ThresholdFigure(rawValue: key) else { return }
                settings.bands[figure] = try reader.band(figure)
            }
        }

        mutating func band(_ figure: ThresholdFigure) throws -> BandLimits? {
            let field = "bands.\(figure.rawValue)"
            guard try !nullOrObject(field, "an object {\"goodBelow\": …, \"criticalAbove\": …} in \(figure.unit)") else { return nil }
            var goodBelow: Double?
            var criticalAbove: Double?
            try members(of: field, allowed: ["goodBelow", "criticalAbove"]) { reader, key in
                let value = try reader.number("\(field).\(key)", name: key)
                if key == "goodBelow" { goodBelow = value } else { criticalAbove = value }
            }
            guard let goodBelow else {
                throw Failure(.invalidField, field: "\(field).goodBelow",
                              message: "goodBelow (\(figure.unit)) is required; send \"\(figure.rawValue)\": null for the default bands")
            }
            guard let criticalAbove else {
                throw Failure(.invalidField, field: "\(field).criticalAbove",
                              message: "criticalAbove (\(figure.unit)) is required; send \"\(figure.rawValue)\": null for the default bands")
            }
            return BandLimits(goodBelow: goodBelow, criticalAbove: criticalAbove)
        }

        mutating func verdict(into settings: inout AppThresholds) throws {
            guard try !nullOrObject("verdict", "an object with minimumChange and minimumVisits") else { return }
            try members(of: "verdict", allowed: ["minimumChange", "minimumVisits"]) { reader, key in
                if key == "minimumChange" {
                    settings.minimumChange = try reader.number("verdict.minimumChange", name: key)
                } else {
                    settings.minimumVisits = try reader.wholeNumber("verdict.minimumVisits", name: key)
                }
            }
        }

        mutating func alerts(into settings: inout AppThresholds) throws {
            guard try !nullOrObject("alerts", "an object with minimumInstallations") else { return }
            try members(of: "alerts", allowed: ["minimumInstallations"]) { reader, key in
                settings.minimumInstallations = try reader.wholeNumber("alerts.minimumInstallations", name: key)
            }
        }

        /// A finite number, or `nil` for `null`.
        mutating func number(_ field: String, name: String) throws -> Double? {
            try value(field, name: name, kind: "a finite number") { (scanner: inout JSONScanner) throws(JSONScanError) -> Double in try scanner.double() }
        }

        /// A whole number within `Int`'s range, or `nil` for `null`.
        mutating func wholeNumber(_ field: String, name: String) throws -> Int? {
            try value(field, name: name, kind: "a whole number") { (scanner: inout JSONScanner) throws(JSONScanError) -> Int in try scanner.integer() }
        }

        /// A number read by `read`, `nil` for `null`; a string, object, array, boolean or
        /// anything `read` refuses is `invalid_field` for `field`.
        mutating func value<T>(_ field: String, name: String, kind: String, _ read: (inout JSONScanner) throws(JSONScanError) -> T) throws -> T? {
            path = field
            scanner.skipWhitespace()
            if try scanner.null() { return nil }
            let found: String? = switch scanner.peek() {
            case UInt8(ascii: "\""): "a string"
            case UInt8(ascii: "{"): "an object"
            case UInt8(ascii: "["): "an array"
            case UInt8(ascii: "t"), UInt8(ascii: "f"): "a boolean"
            default: nil
            }
            if let found { throw Failure(.invalidField, field: field, message: "\(name) must be \(kind), not \(found)") }
            do {
                return try read(&scanner)
            } catch {
                throw Failure(.invalidField, field: field, message: "\(name) must be \(kind) (\(error.message))")
            }
        }
    }
}
