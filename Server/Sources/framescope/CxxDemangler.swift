import Foundation

/// C++ symbol names (the Itanium ABI's `_Z…`, which GCC and Clang write on Linux and Apple
/// platforms) made readable, for `framescope symbols upload`, as ``SwiftDemangler`` makes
/// Swift's.
///
/// The tool is `FRAMESCOPE_CXXFILT` (when set and not empty), else `c++filt` (binutils, or Xcode's) on `PATH`, else
/// `llvm-cxxfilt` on `PATH`, run once over standard input for all names with `-n` (no leading
/// underscore is stripped: Mach-O's extra `_` is already gone). Without one, C++ names stay
/// mangled and the upload says how many and why. Names that are not C++'s are never changed.
struct CxxDemangler {
    /// The tool's path, or `nil` when there is none.
    let tool: String?
    /// Why there is no tool, for the upload's output (meaningful when ``tool`` is `nil`).
    let missing: String

    /// The demangler with the tool found as described.
    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        if let path = environment["FRAMESCOPE_CXXFILT"], !path.isEmpty {
            tool = FileManager.default.isExecutableFile(atPath: path) ? path : nil
            missing = "FRAMESCOPE_CXXFILT is \(path), not an executable file"
        } else {
            tool = LineFilter.onPath(["c++filt", "llvm-cxxfilt"])
            missing = "no c++filt or llvm-cxxfilt on PATH"
        }
    }

    /// Whether `name` is a C++ mangled name (after a Mach-O leading `_` is dropped).
    static func isCxx(_ name: String) -> Bool {
        name.hasPrefix("_Z")
    }

    /// Each of `names` readable: C++'s demangled, the rest as they are; and how many C++
    /// names stayed mangled, by reason.
    func demangle(_ names: [String]) -> (names: [String], stayedMangled: [StayedMangled]) {
        let cxx = names.indices.filter { Self.isCxx(names[$0]) }
        guard !cxx.isEmpty else { return (names, []) }
        var stayed = StayedMangled.Tally(language: "C++")
        guard let tool else {
            stayed.add(missing, count: cxx.count)
            return (names, stayed.counts)
        }
        let name = (tool as NSString).lastPathComponent
        switch LineFilter.run(tool, arguments: ["-n"], cxx.map { names[$0] }) {
        case let .success(readable):
            var out = names
            for (index, text) in zip(cxx, readable) {
                if text.isEmpty || text == names[index] { stayed.add("\(name) could not read them") } else { out[index] = text }
            }
            return (out, stayed.counts)
        case let .failure(failure):
            stayed.add("\(name) failed: \(failure)", count: cxx.count)
            return (names, stayed.counts)
        }
    }
}
