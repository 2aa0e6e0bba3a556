/// One event the collector refused, and why.
public struct RejectedEvent: Sendable, Hashable, Codable {
    /// Its position in the batch's `events`.
    public var index: Int
    /// The field at fault, as a JSON path (`events[2].report.dropEvents`).
    public var field: String
    /// What is wrong.
    public var message: String

    /// The event at `index` refused for `field`, with `message`.
    public init(index: Int, field: String, message: String) {
        self.index = index
        self.field = field
        self.message = message
    }
}
