import Foundation
#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The SDK's queue on disk: a journal of finished visits not yet in a batch, and one file
/// per sealed batch, oldest first. It is what makes delivery survive the process being
/// killed; ``VisitBatchQueue`` owns one (uploaded by ``DeliveryQueue``) and is its only user.
///
/// - **Journal** (`pending.jsonl`): one line per visit, `<sequence> <event JSON>\n`,
///   appended with a single `write`. A line is complete once its newline is there; a
///   process killed mid-write leaves a torn last line, which ``open()`` discards. The
///   journal is not synced per line: it survives the process being killed (the data is
///   in the kernel), and a power loss can lose its last lines.
/// - **Batches** (`batch-<first>-<last>-<batchId>.json.gz`): the gzip body of one
///   `POST /v1/events`, written to a temporary file, synced, then renamed, and the folder
///   synced after the rename, so a batch file is either whole or absent, and once sealed
///   stays there through a power loss. Its name carries the visits' sequence numbers and
///   the batch id, which stays the same across retries and restarts, and, once an upload
///   has failed in a way that counts against the batch, the failures:
///   `batch-<first>-<last>-<batchId>.attempts-<n>.json.gz` (renamed, folder synced).
/// - **Sealing** writes the batch file, then empties the journal. Killed in between, the
///   journal still holds visits that are in the batch: ``open()`` skips every line whose
///   sequence number is at most the highest one in a batch file, so no visit is sent twice.
/// - **Bound**: the files together stay under a number of bytes; ``dropOldest(toFit:keeping:)``
///   deletes the oldest batches to get there.
final class DiskQueue {
    /// A sealed batch on disk.
    struct Batch: UploadEntry, Hashable {
        /// The file.
        var url: URL
        /// The batch id sent with it.
        var batchId: String
        /// Sequence numbers of its first and last visit.
        var first: Int
        var last: Int
        /// Its size, in bytes.
        var bytes: Int
        /// Failed uploads counted against it (kept in the file name).
        var attempts = 0
        /// How many visits it holds.
        var events: Int { last - first + 1 }
    }

    /// A queue-level failure: the folder cannot be used.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let directory: URL
    private let journalURL: URL
    private var journal: FileHandle?
    /// The journal's lines (event JSON) with their sequence numbers, oldest first.
    private(set) var pending: [(sequence: Int, json: [UInt8])] = []
    private(set) var journalBytes = 0
    /// Sealed batches, oldest first.
    private(set) var batches: [Batch] = []
    private var nextSequence = 1
    /// Syncs of the folder itself (after each rename), for tests and diagnostics.
    private(set) var directorySyncs = 0

    init(directory: URL) {
        self.directory = directory
        journalURL = directory.appendingPathComponent("pending.jsonl")
    }

    /// Bytes of all files.
    var totalBytes: Int { journalBytes + batches.reduce(0) { $0 + $1.bytes } }
    /// Bytes of the events waiting in the journal (JSON only).
    var pendingJSONBytes: Int { pending.reduce(0) { $0 + $1.json.count } }

    /// Opens the folder: creates it if needed, removes temporary files, lists the batches
    /// and reads the journal back, leaving out torn lines and lines already in a batch.
    /// - Returns: How many journal lines were unreadable and dropped.
    @discardableResult
    func open() throws(Failure) -> Int {
        let files = FileManager.default
        do {
            try files.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw Failure(description: "cannot create the queue folder \(directory.path): \(error.localizedDescription)")
        }
        let names = (try? files.contentsOfDirectory(atPath: directory.path)) ?? []
        batches = []
        for name in names {
            let url = directory.appendingPathComponent(name)
            if name.hasPrefix(".tmp-") {
                try? files.removeItem(at: url)
            } else if let batch = Self.parseBatchName(name, url: url) {
                batches.append(batch)
            }
        }
        batches.sort { $0.first < $1.first }
        let batchedUpTo = batches.last?.last ?? 0

        var damaged = 0
        pending = []
        if let data = files.contents(atPath: journalURL.path) {
            let bytes = [UInt8](data)
            var lineStart = 0
            while let newline = bytes[lineStart...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = bytes[lineStart..<newline]
                lineStart = newline + 1
                guard let space = line.firstIndex(of: UInt8(ascii: " ")),
                      let sequence = Int(String(decoding: line[line.startIndex..<space], as: UTF8.self)) else {
                    damaged += 1
                    continue
                }
                let json = Array(line[(space + 1)...])
                guard (try? JSONDecoder().decode(ScreenVisitEventProbe.self, from: Data(json))) != nil else {
                    damaged += 1
                    continue
                }
                if sequence > batchedUpTo { pending.append((sequence, json)) }
            }
            // Bytes after the last newline are a torn line: dropped by rewriting below.
        }
        nextSequence = max(batchedUpTo, pending.last?.sequence ?? 0) + 1
        try rewriteJournal()
        return damaged
    }

    /// Appends a visit's JSON (one line, no newline inside) to the journal.
    /// - Returns: Its sequence number.
    func append(_ json: [UInt8]) throws(Failure) -> Int {
        guard let journal else { throw Failure(description: "the queue is not open") }
        let sequence = nextSequence
        nextSequence += 1
        var line: [UInt8] = []
        Self.appendLine(sequence: sequence, json: json, to: &line)
        do {
            try journal.write(contentsOf: line)
        } catch {
            throw Failure(description: "cannot write the journal: \(error.localizedDescription)")
        }
        pending.append((sequence, json))
        journalBytes += line.count
        return sequence
    }

    /// Writes the journal's visits as one batch file (the gzip of `body(events)`), then
    /// empties the journal. Does nothing with an empty journal.
    /// - Parameters:
    ///   - batchId: The batch's id.
    ///   - body: Makes the upload body from the events' JSON.
    /// - Returns: The new batch, or nil when there was nothing to seal.
    func seal(batchId: String, body: ([[UInt8]]) -> [UInt8]) throws(Failure) -> Batch? {
        guard let first = pending.first?.sequence, let last = pending.last?.sequence else { return nil }
        let compressed: [UInt8]
        do {
            compressed = try Gzip.compress(body(pending.map(\.json)))
        } catch {
            throw Failure(description: "cannot compress a batch: \(error)")
        }
        let name = Self.batchName(first: first, last: last, batchId: batchId, attempts: 0)
        let url = directory.appendingPathComponent(name)
        try writeAtomically(compressed, to: url)
        let batch = Batch(url: url, batchId: batchId, first: first, last: last, bytes: compressed.count)
        batches.append(batch)
        pending = []
        try rewriteJournal()
        return batch
    }

    /// The body of a batch, or nil when its file is gone or unreadable.
    func body(of batch: Batch) -> [UInt8]? {
        FileManager.default.contents(atPath: batch.url.path).map { [UInt8]($0) }
    }

    /// Counts one more failed upload against `batch`: renames its file to carry the count
    /// and syncs the folder.
    /// - Returns: The batch as it is now.
    /// - Throws: ``Failure`` when the file cannot be renamed (the count is then kept in
    ///   memory only, and lost at a restart) or the folder cannot be synced.
    @discardableResult
    func recordFailedAttempt(_ batch: Batch) throws(Failure) -> Batch {
        guard let index = batches.firstIndex(where: { $0.url == batch.url }) else { return batch }
        batches[index].attempts += 1
        let counted = batches[index]
        let url = directory.appendingPathComponent(
            Self.batchName(first: counted.first, last: counted.last, batchId: counted.batchId, attempts: counted.attempts))
        guard rename(counted.url.path, url.path) == 0 else {
            throw Failure(description: "cannot rename \(counted.url.lastPathComponent) to count a failed upload: "
                          + String(cString: strerror(errno)))
        }
        batches[index].url = url
        try syncDirectory()
        return batches[index]
    }

    /// Deletes a batch (delivered, refused or dropped).
    func remove(_ batch: Batch) {
        try? FileManager.default.removeItem(at: batch.url)
        batches.removeAll { $0.url == batch.url }
    }

    /// Deletes the oldest batches, except `keeping`, until all files fit in `limit` bytes.
    /// - Returns: The batches deleted.
    func dropOldest(toFit limit: Int, keeping: URL?) -> [Batch] {
        var dropped: [Batch] = []
        while totalBytes > limit, let victim = batches.first(where: { $0.url != keeping }) {
            remove(victim)
            dropped.append(victim)
        }
        return dropped
    }

    /// Closes the journal's file handle.
    func close() {
        try? journal?.close()
        journal = nil
    }

    // MARK: - Files

    /// Writes the journal anew from `pending` (atomically) and reopens it for appending.
    private func rewriteJournal() throws(Failure) {
        var bytes: [UInt8] = []
        for (sequence, json) in pending {
            Self.appendLine(sequence: sequence, json: json, to: &bytes)
        }
        try? journal?.close()
        journal = nil
        try writeAtomically(bytes, to: journalURL)
        journalBytes = bytes.count
        do {
            let handle = try FileHandle(forWritingTo: journalURL)
            try handle.seekToEnd()
            journal = handle
        } catch {
            throw Failure(description: "cannot open the journal: \(error.localizedDescription)")
        }
    }

    /// Writes `bytes` to a temporary file in the folder, syncs it and renames it to `url`.
    private func writeAtomically(_ bytes: [UInt8], to url: URL) throws(Failure) {
        let temporary = directory.appendingPathComponent(".tmp-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: temporary.path, contents: nil) else {
            throw Failure(description: "cannot create a file in \(directory.path)")
        }
        do {
            let handle = try FileHandle(forWritingTo: temporary)
            try handle.write(contentsOf: bytes)
            try handle.synchronize()
            try handle.close()
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw Failure(description: "cannot write \(url.lastPathComponent): \(error.localizedDescription)")
        }
        guard rename(temporary.path, url.path) == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: temporary)
            throw Failure(description: "cannot rename to \(url.lastPathComponent): \(reason)")
        }
        // The rename is in the folder's entries: until they are synced, a power loss can
        // undo it even though the file's data is on disk.
        try syncDirectory()
    }

    /// Syncs the folder's entries (`fsync` on the folder), so renames in it survive a power
    /// loss. A file system that cannot sync folders (`EINVAL`) is not an error.
    private func syncDirectory() throws(Failure) {
        switch syncFolder(atPath: directory.path) {
        case 0:
            directorySyncs += 1
        case EINVAL:
            break
        case let error:
            throw Failure(description: "cannot sync the queue folder \(directory.path): \(String(cString: strerror(error)))")
        }
    }

    /// Appends one journal line, `<sequence> <json>\n`, to `bytes`.
    private static func appendLine(sequence: Int, json: [UInt8], to bytes: inout [UInt8]) {
        bytes.append(contentsOf: String(sequence).utf8)
        bytes.append(UInt8(ascii: " "))
        bytes.append(contentsOf: json)
        bytes.append(UInt8(ascii: "\n"))
    }

    /// A batch's file name: `batch-<first>-<last>-<id>.json.gz`, with `.attempts-<n>` before
    /// `.json.gz` once uploads have failed against it.
    static func batchName(first: Int, last: Int, batchId: String, attempts: Int) -> String {
        let counted = attempts > 0 ? ".attempts-\(attempts)" : ""
        return "batch-\(padded(first))-\(padded(last))-\(batchId)\(counted).json.gz"
    }

    /// A batch's file name back to a ``Batch`` (see ``batchName(first:last:batchId:attempts:)``).
    static func parseBatchName(_ name: String, url: URL) -> Batch? {
        guard name.hasPrefix("batch-"), name.hasSuffix(".json.gz") else { return nil }
        let core = name.dropFirst("batch-".count).dropLast(".json.gz".count)
        let parts = core.split(separator: "-", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, let first = Int(parts[0]), let last = Int(parts[1]), first <= last else { return nil }
        // Batch ids are letters, digits, '-' and '_': a dot starts the attempts.
        let idAndAttempts = parts[2].split(separator: ".", omittingEmptySubsequences: false)
        var attempts = 0
        switch idAndAttempts.count {
        case 1:
            break
        case 2:
            guard idAndAttempts[1].hasPrefix("attempts-"), let counted = Int(idAndAttempts[1].dropFirst("attempts-".count)),
                  counted >= 0 else { return nil }
            attempts = counted
        default:
            return nil
        }
        guard !idAndAttempts[0].isEmpty else { return nil }
        let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
        return Batch(url: url, batchId: String(idAndAttempts[0]), first: first, last: last, bytes: size, attempts: attempts)
    }

    /// A sequence number with leading zeros, so names sort in order.
    private static func padded(_ value: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, 12 - digits.count)) + digits
    }
}

/// Syncs the folder at `path` (`open` and `fsync`); returns 0 or the `errno` that failed.
/// A free function, so `open` and `close` are the system's, not ``DiskQueue``'s methods.
private func syncFolder(atPath path: String) -> Int32 {
    let descriptor = open(path, O_RDONLY | O_DIRECTORY)
    guard descriptor >= 0 else { return errno }
    defer { close(descriptor) }
    return fsync(descriptor) == 0 ? 0 : errno
}

/// The part of a visit's JSON that proves a journal line is whole: it parses, and is an
/// object with a screen.
private struct ScreenVisitEventProbe: Decodable {
    var screen: String
}
