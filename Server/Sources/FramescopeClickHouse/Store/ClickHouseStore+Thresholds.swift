import FramescopeStore

/// Per-app thresholds as one control record of kind `thresholds` per app (app = its id,
/// id = ""), the whole setting, replaced whole by each write. No record means every default,
/// and a record written before a setting existed (no `minimumInstallations`) reads with that
/// setting's default.
extension ClickHouseStore {
    /// An app's thresholds as stored.
    struct StoredThresholds: Codable, Sendable {
        /// The bands the app set, by ``ThresholdFigure`` raw value (`motion.hitchRatio`).
        var bands: [String: StoredBand]
        /// The minimum change, a fraction of the baseline, or `nil` for the default.
        var minimumChange: Double?
        /// The minimum visits per side, or `nil` for the default.
        var minimumVisits: Int?
        /// The fewest installations a version needs to take part in alerts, or `nil` for the
        /// default (and in records written before the setting existed).
        var minimumInstallations: Int?
    }

    /// One figure's band limits, in the figure's unit.
    struct StoredBand: Codable, Sendable {
        /// Values below this are good.
        var goodBelow: Double
        /// Values above this are critical.
        var criticalAbove: Double
    }

    /// The thresholds `app` set, or `nil` for an unknown app. Bands of a figure this
    /// version does not know (written by a newer one) are skipped.
    public func thresholds(app: String) async throws -> AppThresholds? {
        guard try await storedApp(app) != nil else { return nil }
        guard let stored = try await control(StoredThresholds.self, "thresholds", app: app, id: "") else { return AppThresholds() }
        var settings = AppThresholds(minimumChange: stored.minimumChange, minimumVisits: stored.minimumVisits,
                                     minimumInstallations: stored.minimumInstallations)
        for (name, band) in stored.bands {
            guard let figure = ThresholdFigure(rawValue: name) else { continue }
            settings.bands[figure] = BandLimits(goodBelow: band.goodBelow, criticalAbove: band.criticalAbove)
        }
        return settings
    }

    /// Replaces `app`'s thresholds with `thresholds` in one write (a tombstone when it sets
    /// nothing); `false` for an unknown app (revoked apps keep their settings).
    /// - Throws: ``ThresholdError`` when a value is not physical (nothing is written).
    public func setThresholds(_ thresholds: AppThresholds, app: String) async throws -> Bool {
        let settings = try thresholds.validated()
        guard try await storedApp(app) != nil else { return false }
        var bands: [String: StoredBand] = [:]
        for (figure, limits) in settings.bands { bands[figure.rawValue] = StoredBand(goodBelow: limits.goodBelow, criticalAbove: limits.criticalAbove) }
        let stored = settings.isEmpty ? nil : StoredThresholds(bands: bands, minimumChange: settings.minimumChange, minimumVisits: settings.minimumVisits,
                                                                minimumInstallations: settings.minimumInstallations)
        try await putControl("thresholds", app: app, id: "", stored)
        return true
    }
}
