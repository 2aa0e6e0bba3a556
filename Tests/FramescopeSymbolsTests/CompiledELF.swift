import Foundation
import Testing

/// A small C++ program compiled here with `g++ -O2`, for what the real files of
/// `../shared/binaries` cannot be made to show on demand: an `_init` of size 0 in `.init`
/// right before `.plt`, and each kind of GCC clone (`.constprop`, `.isra`, `.part`, `.cold`).
///
/// Each test compiles it into a folder of its own, removed when the value is released; the
/// peer that checks the reader (`readelf`) is binutils', which scripts/test installs. GCC's
/// `g++` makes the clones (clang makes none of these); missing, a test fails naming the
/// package to install rather than skipping.
final class CompiledELF {
    /// The program. `scaled` is always called with scale 3 (GCC makes `.constprop.0`),
    /// `usedOf` reads one field of its argument (`.isra.0`), `checksum`'s early exit is inlined
    /// into `main` and its loop split off (`.part.0`), and `decode`'s call of a cold function
    /// is moved to `decode.cold`.
    static let source = """
        #include <cstdio>
        #include <cstring>

        namespace shop {
        __attribute__((noinline)) static int scaled(int value, int scale) {
            int sum = 0;
            for (int i = 0; i < value; i++) sum += i * scale ^ (sum >> 3);
            return sum;
        }

        struct Big { int a[16]; int used; };
        __attribute__((noinline)) static int usedOf(const Big *big) {
            int total = 0;
            for (int i = 0; i < big->used; i++) total += i * 7 ^ total;
            return total;
        }

        static int checksum(const char *text, int length) {
            if (length < 4) return length;
            int hash = 0;
            for (int i = 0; i < length; i++) hash = hash * 31 + text[i];
            for (int i = 0; i < length; i++) hash ^= hash >> (text[i] & 7);
            std::printf("checksum %d\\n", hash);
            return hash;
        }

        __attribute__((cold, noinline)) void report(int at, int length) {
            std::fprintf(stderr, "decode: DEL at %d of %d\\n", at, length);
        }

        __attribute__((noinline)) int decode(const char *text, int length) {
            int hash = 0;
            for (int i = 0; i < length; i++) {
                if (text[i] == 0x7f) {
                    report(i, length);
                    hash = -hash;
                }
                hash = hash * 31 + text[i];
            }
            return hash;
        }
        }

        int main(int argc, char **argv) {
            shop::Big big = {};
            big.used = argc * 1000;
            int result = shop::scaled(argc * 100, 3) + shop::scaled(argc * 200, 3) + shop::usedOf(&big);
            int length = (int)std::strlen(argv[0]);
            result += shop::decode(argv[0], length);
            result += shop::checksum(argv[0], length) + shop::checksum(argv[argc - 1], argc);
            std::printf("%d\\n", result);
            return 0;
        }
        """

    /// The folder that holds the source and the program.
    let folder: URL
    /// The compiled program's path.
    let path: String

    /// Compiles ``source`` with `g++ -O2` into a new temporary folder.
    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("framescope-symbols-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let sourcePath = folder.appendingPathComponent("clones.cpp").path
        path = folder.appendingPathComponent("clones").path
        try Self.source.write(toFile: sourcePath, atomically: true, encoding: .utf8)
        let compiler = try Self.tool("g++", package: "g++")
        let result = try Self.run(compiler, ["-O2", "-o", path, sourcePath])
        try #require(result.status == 0, "g++ -O2 failed: \(result.output)")
    }

    deinit { try? FileManager.default.removeItem(at: folder) }

    /// The program's bytes.
    func bytes() throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// `readelf -sW`'s defined `FUNC` and `IFUNC` rows of `.symtab`: name, value and size.
    func readelfFunctions() throws -> [(name: String, value: UInt64, size: UInt64)] {
        let output = try Self.run(try Self.tool("readelf", package: "binutils"), ["-sW", path]).output
        var rows: [(name: String, value: UInt64, size: UInt64)] = []
        var inSymtab = false
        for line in output.split(separator: "\n") {
            if line.hasPrefix("Symbol table") { inSymtab = line.contains("'.symtab'"); continue }
            let columns = line.split(separator: " ", omittingEmptySubsequences: true)
            guard inSymtab, columns.count >= 8, columns[3] == "FUNC" || columns[3] == "IFUNC", columns[6] != "UND",
                  let value = UInt64(columns[1], radix: 16), let size = UInt64(columns[2]) ?? UInt64(columns[2].dropFirst(2), radix: 16) else { continue }
            rows.append((String(columns[7]), value, size))
        }
        return rows
    }

    /// The executable `name` on `PATH`; a test failure naming `package` when there is none.
    static func tool(_ name: String, package: String) throws -> String {
        let folders = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":")
        let found = folders.map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
        return try #require(found, "\(name) is not on PATH: install \(package)")
    }

    /// Runs `tool` with `arguments`; its exit status and its output and error together.
    static func run(_ tool: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }
}
