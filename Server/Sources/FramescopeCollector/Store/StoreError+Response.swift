import Hummingbird

/// The one place where a store's refusals and failures become HTTP answers: the error
/// middleware (``ErrorShapeMiddleware``) asks every ``StoreError``, every
/// ``StoreErrorConvertible`` and SQLite's `SQLITE_FULL` for ``StoreError/collectorError``.
/// docs/collector-api.md's error table lists the codes.
extension StoreError {
    /// The collector's answer for this error:
    /// - ``appExists(id:)``: 409 `app_exists`, field `id`;
    /// - ``invalidQuery(field:message:)``: 400 `invalid_parameter` naming the parameter;
    /// - ``invalidEvent(field:message:)``: 400 `invalid_event` naming the event's field;
    /// - ``full``: 503 `store_unavailable` with `Retry-After: 60` (an operator has to free
    ///   space, hence a minute, not seconds);
    /// - ``unavailable(store:retryAfter:)``: 503 `store_unavailable` with `Retry-After`, so
    ///   that devices keep the batch and send it again;
    /// - ``readTookTooLong(what:seconds:)``: 503 `store_unavailable` with `Retry-After` of
    ///   the bound's seconds;
    /// - ``failed``: 500 `store_error`, saying nothing more (the store's own text may quote data).
    public var collectorError: CollectorError {
        switch self {
        case .appExists:
            CollectorError(.conflict, .appExists, field: "id", message: description)
        case .invalidQuery(let field, let message):
            CollectorError(.badRequest, .invalidParameter, field: field, message: message)
        case .invalidEvent(let field, let message):
            CollectorError(.badRequest, .invalidEvent, field: field, message: message)
        case .full:
            CollectorError(.serviceUnavailable, .storeUnavailable,
                           message: "the collector's store is full (no space left for the database); send again later",
                           headers: [.retryAfter: "60"])
        case .unavailable(let store, let retryAfter):
            CollectorError(.serviceUnavailable, .storeUnavailable,
                           message: "the collector's store (\(store)) cannot be reached; send again later", headers: [.retryAfter: String(retryAfter)])
        case .readTookTooLong(_, let seconds):
            CollectorError(.serviceUnavailable, .storeUnavailable, message: description, headers: [.retryAfter: String(max(1, seconds))])
        case .failed:
            CollectorError(.internalServerError, .storeError, message: "the collector's store failed")
        }
    }
}
