import Foundation
import Testing

/// `framescope analyze` on a SurfaceFlinger dump whose frames are all pending: exit 65 and
/// a message on stderr, as for any recording with no frame; nothing on stdout.
@Suite("framescope analyze: a SurfaceFlinger dump with no presented frame")
struct AnalyzeNoFrameCLITests {
    @Test("All frames pending: exit 65, the file and what its rows were on stderr, stdout empty", arguments: ["table", "json"])
    func allPending(format: String) throws {
        let directory = try TemporaryDirectory()
        let path = try directory.file("pending.txt", "16666667\n1000000000\t9223372036854775807\t990000000\n1016666667\t9223372036854775807\t1005000000\n")
        let result = try CLI.run(["analyze", "--format", format, path])
        #expect(result.exitCode == 65)
        #expect(result.stderr.contains("\(path): has no presented frame (2 frames not yet presented (pending fence))"), "\(result.stderr)")
        #expect(result.stdout.isEmpty, "\(result.stdout)")
    }
}
