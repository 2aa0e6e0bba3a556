import Foundation

/// A token bucket per key: each key may send `burst` requests at once and
/// `requestsPerSecond` on average. Over the limit, the caller answers 429 with
/// `Retry-After` set to the seconds until a token is back.
actor RateLimiter {
    private struct Bucket {
        var tokens: Double
        var updated: Double
    }

    private let requestsPerSecond: Double
    private let burst: Double
    private var buckets: [String: Bucket] = [:]

    /// - Parameters:
    ///   - requestsPerSecond: Sustained requests per second allowed per key.
    ///   - burst: Requests a key may send at once after being idle.
    init(requestsPerSecond: Double, burst: Double) {
        self.requestsPerSecond = requestsPerSecond
        self.burst = burst
    }

    /// Takes a token for `key` at time `now` (seconds). Returns `nil` when allowed, or
    /// the whole seconds to wait before a token is back.
    func acquire(_ key: String, now: Double) -> Int? {
        var bucket = buckets[key] ?? Bucket(tokens: burst, updated: now)
        bucket.tokens = min(burst, bucket.tokens + max(0, now - bucket.updated) * requestsPerSecond)
        bucket.updated = now
        if bucket.tokens >= 1 {
            bucket.tokens -= 1
            buckets[key] = bucket
            return nil
        }
        buckets[key] = bucket
        return max(1, Int(((1 - bucket.tokens) / requestsPerSecond).rounded(.up)))
    }
}
