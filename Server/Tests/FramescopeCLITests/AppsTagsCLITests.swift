import Foundation
import Testing

/// `framescope apps tags`, through the built binary.
@Suite("framescope apps tags", .serialized)
struct AppsTagsCLITests {
    @Test("tags: list, --add (again: already), --remove; bad keys and an eleventh key 64 naming --add, unknown app or key 65")
    func tags() throws {
        let directory = try TemporaryDirectory()
        let db = directory.url.appendingPathComponent("collector.sqlite").path
        #expect(try CLI.run(["apps", "create", "Shop", "--db", db]).exitCode == 0)
        let empty = try CLI.run(["apps", "tags", "shop", "--db", db, "--format", "json"])
        #expect(empty.exitCode == 0, "\(empty.stderr)")
        #expect(empty.stdout.filter { !$0.isWhitespace } == #"{"tags":[]}"#)
        let added = try CLI.run(["apps", "tags", "shop", "--add", "experiment", "--db", db])
        #expect(added.exitCode == 0 && added.stdout == "declared tag key 'experiment' for shop: its values are rolled up from now on\n", "\(added.stderr)")
        let again = try CLI.run(["apps", "tags", "shop", "--add", "experiment", "--db", db])
        #expect(again.exitCode == 0 && again.stdout.contains("already declared"))
        let listed = try CLI.run(["apps", "tags", "shop", "--db", db, "--format", "json"])
        let object = try #require(JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: [[String: String]]])
        #expect(object["tags"]?.map { $0["key"] } == ["experiment"])
        #expect(object["tags"]?.first?["declaredAt"]?.hasSuffix("Z") == true)
        for bad in ["", String(repeating: "k", count: 65), "a\u{7}b"] {
            let refused = try CLI.run(["apps", "tags", "shop", "--add", bad, "--db", db])
            #expect(refused.exitCode == 64 && refused.stderr.contains("--add:"), "\(bad.debugDescription): \(refused.stderr)")
        }
        for index in 1..<10 { #expect(try CLI.run(["apps", "tags", "shop", "--add", "k\(index)", "--db", db]).exitCode == 0) }
        let eleventh = try CLI.run(["apps", "tags", "shop", "--add", "k10", "--db", db])
        #expect(eleventh.exitCode == 64 && eleventh.stderr.contains("at most 10 tag keys"), "\(eleventh.stderr)")
        #expect(try CLI.run(["apps", "tags", "shop", "--add", "a", "--remove", "b", "--db", db]).exitCode == 64)
        let removed = try CLI.run(["apps", "tags", "shop", "--remove", "experiment", "--db", db])
        #expect(removed.exitCode == 0 && removed.stdout.contains("removed tag key 'experiment'"), "\(removed.stderr)")
        #expect(try CLI.run(["apps", "tags", "shop", "--remove", "experiment", "--db", db]).exitCode == 65)
        let unknown = try CLI.run(["apps", "tags", "nope", "--db", db])
        #expect(unknown.exitCode == 65 && unknown.stderr.contains("no app 'nope'"))
        #expect(try CLI.run(["apps", "tags", "nope", "--add", "x", "--db", db]).exitCode == 65)
        _ = directory
    }
}
