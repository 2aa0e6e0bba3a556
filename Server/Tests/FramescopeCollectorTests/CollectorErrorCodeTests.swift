import Foundation
@testable import FramescopeCollector
@testable import FramescopeSQLite
@testable import FramescopeStore
import Testing

/// `CollectorError.Code` is the vocabulary of error codes a client matches on; docs/collector-api.md's
/// error table is where clients read it. These tests hold the two to each other, and keep
/// codes from being written as free text in the collector's sources.
@Suite("Error codes: the type and the documentation's error table agree")
struct CollectorErrorCodeTests {
    /// The repository's root: four levels up from this file (Server/Tests/FramescopeCollectorTests/…).
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The codes in the second column of the table under `| status | code | when |`, without
    /// patterns such as `http_<status>`.
    static func documentedCodes() throws -> Set<String> {
        let text = try String(contentsOf: root.appendingPathComponent("docs/collector-api.md"), encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let header = try #require(lines.firstIndex { $0.hasPrefix("| status | code | when |") }, "docs/collector-api.md has no error table")
        var codes: Set<String> = []
        for line in lines[(header + 2)...] {
            guard line.hasPrefix("|") else { break }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false)
            guard cells.count > 2 else { continue }
            for (index, part) in cells[2].split(separator: "`", omittingEmptySubsequences: false).enumerated() where index % 2 == 1 {
                if !part.contains("<") { codes.insert(String(part)) }
            }
        }
        return codes
    }

    @Test("Every declared code is in docs/collector-api.md's error table")
    func declaredCodesAreDocumented() throws {
        let documented = try Self.documentedCodes()
        for code in CollectorError.Code.all {
            #expect(documented.contains(code.rawValue), "\(code) is declared but not in docs/collector-api.md's error table")
        }
    }

    @Test("Every code the error table lists is declared in CollectorError.Code")
    func documentedCodesAreDeclared() throws {
        let declared = Set(CollectorError.Code.all.map(\.rawValue))
        let documented = try Self.documentedCodes()
        #expect(!documented.isEmpty)
        for code in documented.sorted() {
            #expect(declared.contains(code), "docs/collector-api.md lists \(code), which CollectorError.Code does not declare")
        }
    }

    @Test("Codes are declared once each and spelled in lower snake case")
    func codesAreDistinct() {
        let names = CollectorError.Code.all.map(\.rawValue)
        #expect(Set(names).count == names.count)
        for name in names {
            #expect(!name.isEmpty && name.allSatisfy { $0 == "_" || ("a"..."z").contains($0) }, "\(name)")
        }
    }

    @Test("The router's own errors are not_found for 404 and http_<status> otherwise")
    func routerCodes() {
        #expect(CollectorError.Code.http(.notFound) == .notFound)
        #expect(CollectorError.Code.http(.badRequest).rawValue == "http_400")
    }

    @Test("No source of the server package writes an error code as free text (code: \"…\")")
    func noFreeLiterals() throws {
        let sources = Self.root.appendingPathComponent("Server/Sources")
        let files = try #require(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
        for case let file as URL in files where file.pathExtension == "swift" {
            let text = try String(contentsOf: file, encoding: .utf8)
            #expect(!text.contains("code: \""), "\(file.lastPathComponent) writes an error code as text; use CollectorError.Code")
        }
    }
}
