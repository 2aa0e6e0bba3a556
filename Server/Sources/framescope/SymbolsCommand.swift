import ArgumentParser
import AsyncHTTPClient
import CompressNIO
import Foundation
import FramescopeCollector
import FramescopeCore
import FramescopeSymbols
import NIOCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `framescope symbols`: the symbol tables that turn hang stacks into function names.
struct SymbolsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "symbols",
        abstract: "Upload a build's symbols, so that hang stacks show function names.",
        subcommands: [Upload.self]
    )

    /// `framescope symbols upload --app APP FILE…`.
    struct Upload: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "upload",
            abstract: "Read the function symbols of object files and store them for an app.",
            discussion: """
                FILE is a Mach-O binary or dSYM (fat or thin; a .dSYM bundle is read from \
                Contents/Resources/DWARF), or an ELF file (with .symtab, or .dynsym). Each image \
                is stored under its LC_UUID or GNU build id, which is how hang frames name it. Swift \
                names are demangled here (swift-demangle; FRAMESCOPE_SWIFT_DEMANGLE names it), and \
                C++ names (c++filt or llvm-cxxfilt on PATH; FRAMESCOPE_CXXFILT names it); the \
                output says how many stayed mangled and why. A compiler's clones keep their \
                function's name with a note (f(int) [clone .cold]), and hangs group by the function. \
                Send them to a collector with --url and the app's admin key (--key or \
                FRAMESCOPE_ADMIN_KEY), or write them into a store with --db or --store.
                """
        )

        @Option(help: "The app id.") var app: String
        @Option(help: "The collector's base URL (http://host:port).") var url: String?
        @Option(help: ArgumentHelp("The app's admin key; default: the FRAMESCOPE_ADMIN_KEY environment variable.", valueName: "key"))
        var key: String?
        @OptionGroup var storeOptions: StoreOptions
        @Argument(help: ArgumentHelp("Object files or .dSYM bundles.", valueName: "file")) var files: [String]

        mutating func validate() throws {
            let hasStore = storeOptions.store != nil || storeOptions.db != nil
            if (url != nil) == hasStore { throw ValidationError("give --url (with the admin key) or --db/--store, one of them") }
            if files.isEmpty { throw ValidationError("name at least one object file or .dSYM bundle") }
        }

        func run() async throws {
            let names = SymbolNames(swift: SwiftDemangler(), cxx: CxxDemangler())
            if names.swift.tool == nil {
                writeToStandardError("framescope: swift-demangle not found (set FRAMESCOPE_SWIFT_DEMANGLE): Swift 5 names are read by the runtime, older ones stay mangled\n")
            }
            // A store is checked for the app before any file is read: nothing is stored for an
            // app that does not exist.
            var store: (any CollectorStore)?
            if url == nil {
                let opened = try await storeOptions.open()
                guard try await opened.apps().contains(where: { $0.app == app }) else {
                    throw CLIFailure(exitCode: CLIFailure.dataError,
                                     message: "no app '\(app)' in \(storeOptions.name()): create it first (framescope apps create)")
                }
                store = opened
            }
            var images: [SymbolUpload.Image] = []
            var stayedMangled: [[StayedMangled]] = []
            for path in try SymbolFiles.expand(files) {
                let bytes = try SymbolFiles.read(path)
                let read: [SymbolImage]
                do { read = try ObjectFile.images(in: bytes) } catch {
                    throw CLIFailure(exitCode: CLIFailure.dataError, message: "\(path): \(error)")
                }
                for image in read {
                    if let id = image.id, let problem = SymbolUpload.idProblem(id) {
                        writeToStandardError("framescope: \(path) (\(image.arch)): \(problem); skipped\n")
                        continue
                    }
                    guard let upload = SymbolFiles.upload(image, path: path, names: names) else {
                        writeToStandardError("framescope: \(path) (\(image.arch)): no UUID or build id, so no hang frame can name it; skipped\n")
                        continue
                    }
                    images.append(upload.image)
                    stayedMangled.append(upload.stayedMangled)
                }
            }
            guard !images.isEmpty else { throw CLIFailure(exitCode: CLIFailure.dataError, message: "no image with a UUID or build id in the files given") }
            if let problem = SymbolUpload(images: images).problem() {
                throw CLIFailure(exitCode: CLIFailure.dataError, message: "\(problem.0): \(problem.1)")
            }
            if let store {
                try await store.storeSymbols(app: app, images: images, now: Date().timeIntervalSince1970)
            } else if let url {
                try await send(images, to: url)
            }
            for (image, stayed) in zip(images, stayedMangled) {
                let note = image.symbols.isEmpty ? " (no function symbols: a stripped binary; its frames stay image + offset)" : ""
                let mangled = stayed.map { "; \($0)" }.joined()
                print("\(image.name) (\(image.arch), \(image.id)): \(image.symbols.count) symbols\(note)\(mangled)")
            }
        }

        /// POSTs each image alone, gzip-compressed, to `POST {url}/v1/apps/{app}/symbols`.
        func send(_ images: [SymbolUpload.Image], to url: String) async throws {
            guard let key = key ?? ProcessInfo.processInfo.environment["FRAMESCOPE_ADMIN_KEY"] else {
                throw ValidationError("give the app's admin key with --key or FRAMESCOPE_ADMIN_KEY")
            }
            let base = url.hasSuffix("/") ? String(url.dropLast()) : url
            let address = "\(base)/v1/apps/\(app.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? app)/symbols"
            let client = HTTPClient(eventLoopGroupProvider: .singleton)
            do {
                for image in images {
                    let json = try JSONEncoder().encode(SymbolUpload(images: [image]))
                    guard json.count <= SymbolUpload.maximumDecompressedBytes else {
                        throw CLIFailure(exitCode: CLIFailure.dataError, message: "\(image.name): its symbols take \(json.count) bytes, more than a collector takes (\(SymbolUpload.maximumDecompressedBytes))")
                    }
                    var request = HTTPClientRequest(url: address)
                    request.method = .POST
                    request.headers.add(name: "Authorization", value: "Bearer \(key)")
                    request.headers.add(name: "Content-Type", value: "application/json")
                    request.headers.add(name: "Content-Encoding", value: "gzip")
                    var plain = ByteBuffer(data: json)
                    request.body = .bytes(try plain.compress(with: .gzip()))
                    let response = try await client.execute(request, timeout: .seconds(300))
                    let body = try await response.body.collect(upTo: 1 << 20)
                    guard response.status == .created else {
                        throw CLIFailure(exitCode: response.status.code == 400 ? CLIFailure.dataError : CLIFailure.ioError,
                                         message: "\(url): \(response.status.code) \(String(buffer: body))")
                    }
                }
            } catch {
                try? await client.shutdown()
                if error is CLIFailure { throw error }
                throw CLIFailure(exitCode: CLIFailure.ioError, message: "\(url): \(error)")
            }
            try await client.shutdown()
        }
    }
}

/// The files an upload reads, and what it sends of each image.
enum SymbolFiles {
    /// `paths` with each `.dSYM` bundle replaced by the files in its
    /// `Contents/Resources/DWARF` folder; any other folder is refused.
    static func expand(_ paths: [String]) throws -> [String] {
        var files: [String] = []
        for path in paths {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
                throw CLIFailure(exitCode: CLIFailure.ioError, message: "\(path): no such file")
            }
            guard isFolder.boolValue else { files.append(path); continue }
            let dwarf = (path as NSString).appendingPathComponent("Contents/Resources/DWARF")
            // A folder without DWARF files is input the command cannot use (65), not a failure to read (74).
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: dwarf), !names.filter({ !$0.hasPrefix(".") }).isEmpty else {
                let what = path.hasSuffix(".dSYM") || path.hasSuffix(".dSYM/") ? "a .dSYM bundle without DWARF" : "a folder that is not a .dSYM bundle"
                throw CLIFailure(exitCode: CLIFailure.dataError, message: "\(path): \(what) (no files in Contents/Resources/DWARF)")
            }
            files += names.sorted().filter { !$0.hasPrefix(".") }.map { (dwarf as NSString).appendingPathComponent($0) }
        }
        return files
    }

    /// How much of a file is read first, in bytes, to check its header
    /// (``ObjectFile/checkHead(_:fileSize:)``) before the whole file is read.
    static let headBytes = 64 << 10

    /// The bytes of the object file at `path`, read once: its first ``headBytes`` are checked
    /// first, so a file refused for its header is refused from a small read (a 3 GiB file
    /// with a bad header once took 6.3 GB, read whole twice, to be refused), then the rest is
    /// read into the same array, sized from the file's length.
    /// - Throws: ``CLIFailure``: 65 for a header that is wrong, 74 for a file that cannot be read.
    static func read(_ path: String) throws -> [UInt8] {
        func failure(_ what: String) -> CLIFailure {
            CLIFailure(exitCode: CLIFailure.ioError, message: "\(path): cannot read: \(what)")
        }
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw failure(String(cString: strerror(errno))) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw failure(String(cString: strerror(errno))) }
        let size = Int(status.st_size)
        var bytes: [UInt8] = []
        func readUpTo(_ end: Int) throws {
            let start = bytes.count
            guard end > start else { return }
            bytes.reserveCapacity(end)
            bytes.append(contentsOf: repeatElement(0, count: end - start))
            var done = start
            while done < end {
                let got = bytes.withUnsafeMutableBytes { buffer in
                    guard let base = buffer.baseAddress else { return -1 }
                    return pread(descriptor, base + done, end - done, off_t(done))
                }
                if got < 0, errno == EINTR { continue }
                guard got > 0 else { throw failure(got == 0 ? "the file ended at byte \(done) of \(size)" : String(cString: strerror(errno))) }
                done += got
            }
        }
        try readUpTo(min(size, headBytes))
        if size > headBytes {
            do { try ObjectFile.checkHead(bytes, fileSize: size) } catch {
                throw CLIFailure(exitCode: CLIFailure.dataError, message: "\(path): \(error)")
            }
            try readUpTo(size)
        }
        return bytes
    }

    /// What is uploaded of `image` read from `path`: its id, file name, architecture and
    /// function symbols with readable names (``SymbolNames``), and how many of those stayed
    /// mangled and why; `nil` without an id.
    static func upload(_ image: SymbolImage, path: String, names: SymbolNames) -> (image: SymbolUpload.Image, stayedMangled: [StayedMangled])? {
        guard let id = image.id else { return nil }
        // Symbols the collector takes: at least 1 byte long, not overlapping. The readers'
        // bounds keep symbols apart but for aliases (two names at one address), of which the
        // table's first is kept.
        var symbols: [Symbol] = []
        for symbol in image.symbols.symbols where symbol.size > 0 {
            if let last = symbols.last, symbol.offset < last.end { continue }
            symbols.append(symbol)
        }
        let readable = names.readable(symbols)
        var list: [SymbolUpload.Symbol] = []
        list.reserveCapacity(symbols.count)
        // A symbol left without a readable name is not sent.
        for (symbol, name) in zip(symbols, readable.names) where !name.isEmpty {
            list.append(SymbolUpload.Symbol(offset: symbol.offset, size: symbol.size, name: name))
        }
        let name = WireText.sanitized((path as NSString).lastPathComponent, maximumBytes: HangStack.maximumImageNameLength, fallback: "image")
        return (SymbolUpload.Image(id: id, name: name, arch: image.arch, symbols: list), readable.stayedMangled)
    }
}
