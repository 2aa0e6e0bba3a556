import Foundation

/// The SDK's installation id: a random UUID made the first time the SDK runs in an app's
/// installation and kept in the SDK's folder (`installation-id`), so the collector can count
/// distinct installations and sampling (`InstallationSampling`) keeps an installation in
/// or out for good.
///
/// It is not derived from anything: no hardware serial, vendor or advertising identifier,
/// no account. It stays the same across launches and updates, and is new after a reinstall
/// (the folder goes with the app) or when the folder is removed. On Apple platforms the
/// folder is excluded from backups, so a restored or migrated phone gets a new one.
public enum InstallationID {
    /// The file in the SDK's folder that holds the id.
    public static let fileName = "installation-id"

    /// The id stored in `directory`, or a new one stored there (the folder is created).
    /// A file that does not hold a valid id (1–64 ASCII letters, digits, `-` or `_`, as the
    /// collector accepts) is replaced by a new id.
    /// - Throws: An error of the file system when the folder or the file cannot be written.
    public static func load(in directory: URL) throws -> String {
        let url = directory.appendingPathComponent(fileName)
        if FileManager.default.fileExists(atPath: url.path) {
            // A file that is there but cannot be read (data protection before the first
            // unlock, an I/O error) throws rather than making a new id: that would move the
            // installation in or out of the sample and count it twice.
            let text = String(decoding: try Data(contentsOf: url), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if isValid(text) { return text }
        }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let id = UUID().uuidString.lowercased()
        try Data(id.utf8).write(to: url, options: .atomic)
        return id
    }

    /// Whether `text` is an id the collector accepts: 1–64 ASCII letters, digits, `-` or `_`.
    public static func isValid(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 64
            && text.utf8.allSatisfy { byte in
                (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte) || byte == 45 || byte == 95
            }
    }
}
