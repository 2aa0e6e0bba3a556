import Logging
import ServiceLifecycle

/// Runs `work` now and then every `interval` until graceful shutdown or cancellation,
/// then returns normally. A failed run is logged at `level` with `failure` as the message
/// and retried at the next interval; it never stops the server. The background services
/// (``RetentionService``, ``WALCheckpointService``) share this loop.
func runPeriodically(every interval: Duration, logger: Logger, level: Logger.Level, failure: Logger.Message,
                     _ work: @escaping @Sendable () async throws -> Void) async {
    await cancelWhenGracefulShutdown {
        while !Task.isCancelled {
            do {
                try await work()
            } catch {
                logger.log(level: level, failure, metadata: ["error": .string(String(describing: error))])
            }
            try? await Task.sleep(for: interval)
        }
    }
}
