import Foundation
@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeSQLite
@testable import FramescopeStore
import Testing

/// `openapi.json` is written by hand; these tests hold it to the registries in Core and the
/// collector, so a metric, a dimension or a verdict cannot be added to one and not the other.
@Suite("The OpenAPI document agrees with the registries")
struct OpenAPIRegistryTests {
    let document: [String: Any]

    init() throws {
        let text = OpenAPIDocument.served(now: 1_795_132_800)
        document = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    /// The object at a JSON pointer's path of keys.
    func object(_ keys: String...) -> Any? {
        var current: Any? = document
        for key in keys { current = (current as? [String: Any])?[key] }
        return current
    }

    /// The parameters of `GET path`, with `$ref`s resolved.
    func parameters(of path: String) -> [[String: Any]] {
        let listed = object("paths", path, "get", "parameters") as? [[String: Any]] ?? []
        return listed.map { parameter in
            guard let reference = parameter["$ref"] as? String else { return parameter }
            let name = String(reference.split(separator: "/").last ?? "")
            return object("components", "parameters", name) as? [String: Any] ?? [:]
        }
    }

    @Test("The webhook URL's pattern is the collector's own (WebhookURL.pattern): every URL it accepts matches the document")
    func webhookPattern() {
        let schema = object("components", "schemas", "WebhookBody", "properties", "url") as? [String: Any]
        #expect(schema?["pattern"] as? String == WebhookURL.pattern)
    }

    @Test("Every read route takes exactly the registry's dimensions as filters, with the registry's values")
    func dimensions() throws {
        // The app's settings (thresholds) are not a data query: they take no filters.
        // Nor are its alerts and webhooks (an alert holds the figures as they were evaluated),
        // nor the list of its declared tag keys, nor its uploaded symbols, nor its visits per
        // sample rate (counted per app and day, no dimension).
        let settingsPaths = ["/thresholds", "/alerts", "/alerts/{id}/acknowledge", "/webhooks", "/webhooks/{id}", "/tags", "/symbols", "/sample-rates"]
            .map { "/v1/apps/{app}" + $0 }
        let readPaths = (object("paths") as? [String: Any] ?? [:]).keys.filter { $0.hasPrefix("/v1/apps/{app}/") && !settingsPaths.contains($0) }.sorted()
        #expect(readPaths.count == 8, "the rollup routes, metrickit, the export and hangs")
        // The rollup routes also take one declared tag's filter, tag.KEY=VALUE (a name OpenAPI
        // cannot list as a parameter), which their descriptions state.
        for route in ["screens", "timeseries", "compare", "worst", "percentiles"] {
            let description = object("paths", "/v1/apps/{app}/\(route)", "get", "description") as? String ?? ""
            #expect(description.contains("tag.KEY=VALUE") && description.contains("GET /v1/apps/{app}/tags"), "\(route)")
        }
        for path in readPaths {
            let filters = parameters(of: path).filter { ($0["in"] as? String) == "query" && QueryDimension(queryName: $0["name"] as? String ?? "") != nil }
            #expect(Set(filters.compactMap { $0["name"] as? String }) == Set(QueryDimension.all.map(\.queryName)), "\(path)")
            for filter in filters {
                let dimension = try #require(QueryDimension(queryName: filter["name"] as? String ?? ""))
                let schema = filter["schema"] as? [String: Any] ?? [:]
                switch dimension.values {
                case .boolean:
                    #expect(schema["type"] as? String == "boolean", "\(dimension)")
                case .oneOf(let words):
                    #expect(schema["type"] as? String == "string", "\(dimension)")
                    #expect(schema["enum"] as? [String] == words, "\(dimension)")
                case .text:
                    #expect(schema["type"] as? String == "string", "\(dimension)")
                    #expect(schema["enum"] == nil, "\(dimension)")
                }
            }
        }
        // No query parameter in the components that the registry does not know, except the range.
        let components = object("components", "parameters") as? [String: [String: Any]] ?? [:]
        let queryNames = Set(components.values.filter { $0["in"] as? String == "query" }.compactMap { $0["name"] as? String })
        #expect(queryNames == Set(QueryDimension.all.map(\.queryName) + ["from", "to"]))
        #expect(object("components", "schemas", "VisitContext", "properties", "network", "enum") as? [String] == VisitContext.Network.allCases.map(\.rawValue))
    }

    @Test("The checked-in document spells no dimension; the served one is it plus the registry's parameters, values and types kept")
    func dimensionsFromRegistry() throws {
        let checkedIn = try #require(try JSONSerialization.jsonObject(with: Data(OpenAPIDocument.text.utf8)) as? [String: Any])
        let checkedInParameters = (checkedIn["components"] as? [String: Any])?["parameters"] as? [String: Any] ?? [:]
        for dimension in QueryDimension.all {
            #expect(checkedInParameters[OpenAPIDocument.componentName(dimension)] == nil, "\(dimension)")
            #expect(!OpenAPIDocument.text.contains("\"name\": \"\(dimension.queryName)\""), "\(dimension)")
        }
        // Everything else survives the rewrite: the same paths and the same components.
        #expect(Set((checkedIn["paths"] as? [String: Any] ?? [:]).keys) == Set((object("paths") as? [String: Any] ?? [:]).keys))
        #expect(Set(checkedInParameters.keys).union(QueryDimension.all.map(OpenAPIDocument.componentName))
                == Set((object("components", "parameters") as? [String: Any] ?? [:]).keys))
        // JSON booleans stay booleans (not 1 and 0) and the example batch is still moved.
        let served = OpenAPIDocument.served(now: 1_795_132_800)
        #expect(!served.contains("\"required\" : 1") && !served.contains("\"required\" : 0") && served.contains("\"required\" : true"))
        #expect(!served.contains(OpenAPIDocument.exampleStartedAt) && OpenAPIDocument.text.contains(OpenAPIDocument.exampleStartedAt))
        // The dimension parameters follow the range, in the registry's order.
        let names = (object("paths", "/v1/apps/{app}/screens", "get", "parameters") as? [[String: Any]] ?? []).compactMap { $0["$ref"] as? String }
        #expect(Array(names.prefix(3 + QueryDimension.all.count).dropFirst(3)) == QueryDimension.all.map { "#/components/parameters/" + OpenAPIDocument.componentName($0) })
    }

    @Test("Metric names: every report metric is a FrameReport property; metric and by accept exactly the query figures")
    func metrics() throws {
        for metric in Metric.allCases {
            let path = metric.rawValue.split(separator: ".").map(String.init)
            var schema = object("components", "schemas", "FrameReport") as? [String: Any]
            for key in path { schema = (schema?["properties"] as? [String: Any])?[key] as? [String: Any] }
            #expect(schema != nil, "FrameReport has no property \(metric.rawValue)")
            if metric.unit == .count { #expect(schema?["type"] as? String == "integer", "\(metric.rawValue) is a count") }
        }
        for (path, name) in [("/v1/apps/{app}/timeseries", "metric"), ("/v1/apps/{app}/worst", "by")] {
            let parameter = try #require(parameters(of: path).first { $0["name"] as? String == name })
            #expect((parameter["schema"] as? [String: Any])?["enum"] as? [String] == QueryFigure.allNames, "\(path) \(name)")
        }
        #expect(object("components", "schemas", "FigureChange", "properties", "metric", "enum") as? [String] == VisitMetric.allCases.map(\.rawValue))
    }

    @Test("Thresholds: the figures, sources and limits are the collector's; the PUT example is valid")
    func thresholds() throws {
        let bandKeys = (object("components", "schemas", "ThresholdSettings", "properties", "bands", "properties") as? [String: Any])?.keys.sorted()
        #expect(bandKeys == ThresholdFigure.allCases.map(\.rawValue).sorted())
        #expect(object("components", "schemas", "EffectiveBand", "properties", "metric", "enum") as? [String] == ThresholdFigure.allCases.map(\.rawValue))
        #expect(object("components", "schemas", "EffectiveBand", "properties", "source", "enum") as? [String] == ThresholdSource.allCases.map(\.rawValue))
        let visits = object("components", "schemas", "ThresholdSettings", "properties", "verdict", "properties", "minimumVisits") as? [String: Any]
        #expect(visits?["minimum"] as? Int == VerdictRules.standard.minimumVisits && visits?["maximum"] as? Int == VerdictRules.maximumVisits)
        let change = object("components", "schemas", "ThresholdSettings", "properties", "verdict", "properties", "minimumChange") as? [String: Any]
        #expect((change?["maximum"] as? NSNumber)?.doubleValue == VerdictRules.maximumChange)
        let installations = object("components", "schemas", "ThresholdSettings", "properties", "alerts", "properties", "minimumInstallations") as? [String: Any]
        #expect(installations?["minimum"] as? Int == 0 && installations?["maximum"] as? Int == AlertRules.maximumInstallations)
        #expect((installations?["description"] as? String)?.contains("default \(AlertRules.standard.minimumInstallations)") == true)
        #expect(object("components", "schemas", "ThresholdsResponse", "properties", "alerts", "$ref") as? String == "#/components/schemas/EffectiveAlertRules")
        let effective = try JSONSerialization.jsonObject(with: JSONEncoder().encode(EffectiveAlertRules(settings: AppThresholds()))) as? [String: Any]
        #expect(Set(effective?.keys.map { $0 } ?? []) == Set(object("components", "schemas", "EffectiveAlertRules", "required") as? [String] ?? []))
        #expect((object("paths", "/v1/apps/{app}/alerts", "get", "description") as? String)?.contains("at most \(AlertEvaluator.maximumAlertsPerPass) alerts per app") == true)
        #expect(object("paths", "/v1/apps/{app}/thresholds", "put", "security") as? [[String: [String]]] == [["adminKey": []]])
        let content = object("paths", "/v1/apps/{app}/thresholds", "put", "requestBody", "content", "application/json") as? [String: Any]
        let example = try JSONSerialization.data(withJSONObject: try #require(content?["example"]))
        let settings = try JSONDecoder().decode(AppThresholds.self, from: example)
        #expect(settings.problem() == nil && !settings.isEmpty)
    }

    @Test("Alerts and webhooks: the states, figures and keys are the collector's; the webhook example is a valid URL")
    func alerts() throws {
        #expect(object("components", "schemas", "AlertDelivery", "properties", "state", "enum") as? [String] == DeliveryState.allCases.map(\.rawValue))
        #expect(object("components", "schemas", "RegressionAlert", "properties", "metric", "enum") as? [String] == VisitMetric.allCases.map(\.rawValue))
        #expect(object("paths", "/v1/apps/{app}/alerts", "get", "security") as? [[String: [String]]] == [["readKey": []]])
        for (path, method) in [("/alerts/{id}/acknowledge", "post"), ("/webhooks", "get"), ("/webhooks", "post"), ("/webhooks/{id}", "delete")] {
            #expect(object("paths", "/v1/apps/{app}" + path, method, "security") as? [[String: [String]]] == [["adminKey": []]], "\(method) \(path)")
        }
        let content = object("paths", "/v1/apps/{app}/webhooks", "post", "requestBody", "content", "application/json") as? [String: Any]
        let example = try #require((content?["example"] as? [String: String])?["url"])
        #expect(WebhookURL.problem(example) == nil)
        let payloadKeys = (object("components", "schemas", "WebhookPayload", "properties") as? [String: Any])?.keys.sorted()
        let alert = RegressionAlert(id: 1, app: "a", screen: "s", metric: "hitchRatio", baseline: "1", candidate: "2",
                                    figures: FigureChange(metric: "hitchRatio", unit: "ms/s", baselineVisits: 2, candidateVisits: 2, verdict: .regressed),
                                    from: "", to: "", createdAt: "", acknowledgedAt: nil, deliveries: [])
        let encoded = try JSONSerialization.jsonObject(with: Data(try WebhookPayload(alert, publicURL: "http://x").encoded())) as? [String: Any]
        #expect(payloadKeys == encoded?.keys.sorted())
    }

    @Test("Sample rates: the batch's sampleRate and optional app.id as the collector reads them; the route takes whole days and no filter")
    func sampleRates() throws {
        let rate = object("components", "schemas", "EventBatch", "properties", "sampleRate") as? [String: Any]
        #expect(rate?["type"] as? String == "number" && rate?["maximum"] as? Int == 1 && rate?["exclusiveMinimum"] == nil)
        #expect(rate?["minimum"] as? Double == EventBatch.minimumSampleRate, "the one rule: EventBatch.isValidSampleRate")
        #expect((object("components", "schemas", "EventBatch", "required") as? [String])?.contains("sampleRate") == false)
        #expect((object("components", "schemas", "AppInfo", "required") as? [String])?.contains("id") == false)
        #expect(object("paths", "/v1/apps/{app}/sample-rates", "get", "security") as? [[String: [String]]] == [["readKey": []]])
        let names = parameters(of: "/v1/apps/{app}/sample-rates").compactMap { $0["name"] as? String }
        #expect(names == ["app", "from", "to"])
        let encoded = try JSONSerialization.jsonObject(with: JSONEncoder().encode(SampleRatesResponse(sampleRates: [SampleRateVisits(sampleRate: 0.1, visits: 3)])))
        let entry = ((encoded as? [String: Any])?["sampleRates"] as? [[String: Any]])?.first
        let documented = object("components", "schemas", "SampleRatesResponse", "properties", "sampleRates", "items", "required") as? [String]
        #expect(entry.map { Set($0.keys) } == documented.map(Set.init))
    }

    @Test("Verdicts use Core's words")
    func verdicts() {
        for schema in ["FigureChange", "ScreenComparison"] {
            #expect(object("components", "schemas", schema, "properties", "verdict", "enum") as? [String] == Verdict.allCases.map(\.rawValue), "\(schema)")
        }
        #expect(object("components", "schemas", "FigureChange", "properties", "relativeChange") != nil)
    }
}
