import Hummingbird

/// How long a request body may take to arrive: a grace period, then a minimum average
/// rate, and at most a whole-body time.
///
/// The next bytes of a body that has brought `received` bytes so far must arrive by
/// ``deadline(received:)``, in seconds after the body began:
/// `min(grace + received / minimumRate, maximumSeconds)`. This is the rule of Apache's
/// `mod_reqtimeout` (its default is `body=20,MinRate=500`), with a cap: without one, a client
/// that sends most of a 4 MiB body at once has bought hours of holding it (4 MiB at
/// 1 KiB/s is 68 minutes), so 32 such clients would hold the whole ``ByteBudget`` for
/// the price of one upload. With the cap, holding the budget means sending it again every
/// ``maximumSeconds``: a flood, not a trickle.
///
/// A body that falls behind is answered 408 `body_too_slow` (``CollectorError/bodyTooSlow(_:received:seconds:)``)
/// and its bytes given back to the budget. A body that stops altogether is also closed by
/// the connection's idle timeout (``ConnectionLimits/idleTimeout``), whichever comes first.
public struct BodyPace: Sendable, Hashable {
    /// Seconds any body may take before the rate counts (default 10 s): enough for a
    /// phone's radio to wake and a TCP connection to ramp up.
    public var grace: Double
    /// Bytes per second a body must average after the grace period (default 1,024 B/s,
    /// 8 kbit/s: slower than the worst GPRS link a device uploads over).
    public var minimumRate: Double
    /// Seconds after which any body is too slow, however well it began (default 120 s:
    /// the SDK's largest default batch, 256 KiB, then needs 2.2 KB/s).
    public var maximumSeconds: Double

    /// A pace; the defaults are the collector's.
    /// - Parameters:
    ///   - grace: Seconds before the rate counts.
    ///   - minimumRate: Bytes per second a body must average after `grace`.
    ///   - maximumSeconds: Seconds after which any body is too slow.
    public init(grace: Double = 10, minimumRate: Double = 1_024, maximumSeconds: Double = 120) {
        self.grace = max(0, grace)
        self.minimumRate = max(1, minimumRate)
        self.maximumSeconds = max(0, maximumSeconds)
    }

    /// Seconds after the body began by which more than `received` bytes must have
    /// arrived (or the body ended): `min(grace + received / minimumRate, maximumSeconds)`.
    ///
    /// With the defaults: 10.003 s for a body that has sent 3 bytes, 30 s for one that
    /// has sent 20 KiB, 120 s for any body of 110 KiB or more.
    public func deadline(received: Int) -> Double {
        min(grace + Double(max(0, received)) / minimumRate, maximumSeconds)
    }
}

extension CollectorError {
    /// 408 with `Connection: close`: the body arrived slower than `pace` allows.
    /// - Parameters:
    ///   - received: Bytes of the body that had arrived.
    ///   - seconds: Seconds since the body began.
    static func bodyTooSlow(_ pace: BodyPace, received: Int, seconds: Double) -> CollectorError {
        CollectorError(.requestTimeout, .bodyTooSlow,
                       message: "the request body arrived too slowly (\(received) bytes in \(Int(seconds.rounded())) s): a body must average "
                           + "\(Int(pace.minimumRate)) bytes/s after its first \(Int(pace.grace)) s and end within \(Int(pace.maximumSeconds)) s; send it again",
                       headers: [.connection: "close"])
    }

    /// 413: the body is (or says it is) larger than `limit` bytes.
    static func bodyTooLarge(_ limit: Int) -> CollectorError {
        CollectorError(.contentTooLarge, .bodyTooLarge, message: "the request body is larger than the collector accepts (\(limit) bytes)")
    }
}
