import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A queue on disk that ``Uploader`` serves: its entries, oldest first, their bodies and
/// requests, and what each of the uploader's actions does to its files and its counters.
/// The visits' batches (``VisitBatchQueue``) and MetricKit's payloads (``MetricKitQueue``)
/// are the two; each keeps its own folder, and its rules that differ are values
/// (``UploadStateMachine/Rules``, ``wording``).
///
/// Every requirement runs on the uploader's actor; none waits, sleeps or sends.
protocol UploadQueue {
    /// A queued entry; the uploader reads only its failed ``UploadEntry/attempts``.
    associatedtype Entry: UploadEntry
    /// The collector's answer to a delivered entry.
    associatedtype Answer: Sendable
    /// What the queue counts; the uploader counts attempts, retries and errors in it.
    associatedtype Statistics: UploadCounting

    /// The rules of its uploads.
    var rules: UploadStateMachine.Rules { get }
    /// How its log lines name things.
    var wording: UploadWording { get }
    /// Its counters so far (without what is on disk now).
    var statistics: Statistics { get set }
    /// Its counters with what is on disk now.
    var currentStatistics: Statistics { get }

    /// The entries waiting, oldest first.
    func entries() -> [Entry]
    /// Whether nothing waits to be sent.
    var isEmpty: Bool { get }
    /// The body to send for `entry`, or nil when its file cannot be read: the queue has then
    /// dropped it and counted it.
    mutating func body(of entry: Entry) -> [UInt8]?
    /// The request that sends `entry`, what its answer should be (for the message when a 2xx
    /// is not it), and how to read that answer.
    func request(for entry: Entry) -> (request: URLRequest, what: String, answer: @Sendable (Data) -> Answer?)

    /// Deletes `entry`, which the collector took, and counts `answer`.
    mutating func delivered(_ entry: Entry, answer: Answer)
    /// Deletes `entry`, which the collector refused with `status` and `error`, as its own
    /// fault; returns the line to log.
    mutating func refused(_ entry: Entry, status: Int, error: String) -> String
    /// Keeps `entry`, which the collector refused with `status` and `error` for a reason
    /// that is not its own: moves it behind the others by raising its count to `attempts`
    /// (no further); returns the line to log.
    mutating func keep(_ entry: Entry, attempts: Int, status: Int, error: String) -> String
    /// Records `attempts` failures against `entry` (in its file name, so a restart keeps them);
    /// `movedBack`: whether that moves it behind the others. Returns a line to log, if any.
    mutating func record(attempts: Int, against entry: Entry, movedBack: Bool, reason: String) -> String?
    /// Deletes `entry` after `attempts` failed attempts; returns the line to log.
    mutating func abandon(_ entry: Entry, attempts: Int, reason: String) -> String

    /// Called on the uploader when its loop starts (the batches seal recovered visits later).
    static func running(_ uploader: isolated Uploader<Self>)
    /// Called on the uploader when a flush begins, before it looks at what is queued (the
    /// batches seal what is pending).
    static func flushing(_ uploader: isolated Uploader<Self>)
    /// Called on the uploader when it stops (the batches close their journal).
    static func stopping(_ uploader: isolated Uploader<Self>)
    /// Called on the uploader when a timer the queue set (``UploadTimer/queue(_:)``) fires
    /// with `value` (the batches' age seal).
    static func fired(_ uploader: isolated Uploader<Self>, _ value: Int)
}

/// An entry of an ``UploadQueue``.
protocol UploadEntry: Sendable {
    /// Failed uploads counted against it so far (kept in its file name).
    var attempts: Int { get }
}

/// The counters every queue's statistics share (``DeliveryStatistics``,
/// ``MetricKitStatistics``); the uploader keeps them.
protocol UploadCounting {
    /// Upload attempts, successful or not.
    var uploadAttempts: Int { get set }
    /// Attempts that failed and will be retried.
    var retries: Int { get set }
    /// What the collector says is wrong with the configuration, until it takes or judges an
    /// entry again.
    var configurationError: String? { get set }
    /// The latest failure, for diagnostics.
    var lastError: String? { get set }
}

/// How one queue's log lines name what it sends.
struct UploadWording: Sendable, Equatable {
    /// Every entry of the queue, as in "every batch is kept and retried with backoff".
    var everyEntry: String
    /// The line logged when the collector takes or judges an entry after a wrong configuration.
    var acceptsAgain: String
}

extension UploadQueue {
    static func running(_ uploader: isolated Uploader<Self>) {}
    static func flushing(_ uploader: isolated Uploader<Self>) {}
    static func stopping(_ uploader: isolated Uploader<Self>) {}
    static func fired(_ uploader: isolated Uploader<Self>, _ value: Int) {}
}

extension DeliveryStatistics: UploadCounting {}
extension MetricKitStatistics: UploadCounting {}
