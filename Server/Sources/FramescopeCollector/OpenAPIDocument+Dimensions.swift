import Foundation
import FramescopeCore

/// The dimension filters of the OpenAPI document, from the registry (``QueryDimension``):
/// one parameter component per dimension, referred to by every operation that takes the
/// time range (its `To` parameter), right after it.
extension OpenAPIDocument {
    /// `document` (OpenAPI JSON) with a `components.parameters` entry per dimension, and a
    /// reference to each after every `To` reference; the document unchanged when it does not
    /// parse. Keys come out sorted, two spaces deep.
    static func withDimensions(_ document: String) -> String {
        guard var root = (try? JSONSerialization.jsonObject(with: Data(document.utf8))) as? [String: Any] else { return document }
        var components = root["components"] as? [String: Any] ?? [:]
        var parameters = components["parameters"] as? [String: Any] ?? [:]
        for dimension in QueryDimension.all { parameters[componentName(dimension)] = parameter(dimension) }
        components["parameters"] = parameters
        root["components"] = components
        let range = ["$ref": "#/components/parameters/To"]
        let references: [[String: Any]] = QueryDimension.all.map { ["$ref": "#/components/parameters/" + componentName($0)] }
        var paths = root["paths"] as? [String: Any] ?? [:]
        for (path, item) in paths {
            guard var operations = item as? [String: Any] else { continue }
            for (method, operation) in operations {
                guard var operation = operation as? [String: Any], var listed = operation["parameters"] as? [[String: Any]],
                      let at = listed.firstIndex(where: { ($0 as? [String: String]) == range }) else { continue }
                listed.insert(contentsOf: references, at: at + 1)
                operation["parameters"] = listed
                operations[method] = operation
            }
            paths[path] = operations
        }
        root["paths"] = paths
        guard let data = try? JSONSerialization.data(withJSONObject: root, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]) else {
            return document
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// The component's name: the query name with a capital (`deviceModel` → `DeviceModel`).
    static func componentName(_ dimension: QueryDimension) -> String {
        dimension.queryName.prefix(1).uppercased() + dimension.queryName.dropFirst()
    }

    /// The query parameter of `dimension`: optional, described from its label, typed by the
    /// values it takes.
    static func parameter(_ dimension: QueryDimension) -> [String: Any] {
        let schema: [String: Any]
        var description: String
        switch dimension.values {
        case .text:
            schema = ["type": "string"]
            description = "Only this \(dimension.labelInSentence)"
        case .oneOf(let words):
            schema = ["type": "string", "enum": words]
            description = "Only this \(dimension.labelInSentence)"
            if words.contains(QueryDimension.unknownValue) {
                description += " ('\(QueryDimension.unknownValue)': data from before the dimension was kept)"
            }
        case .boolean:
            schema = ["type": "boolean"]
            description = "Only visits with (true) or without (false) \(dimension.labelInSentence)"
        }
        return ["name": dimension.queryName, "in": "query", "required": false, "description": description, "schema": schema]
    }
}
