extension Int {
    /// `self + other`, clamped to `Int.min...Int.max` instead of trapping.
    ///
    /// Counts from outside (a device's report, a stored rollup) are validated against
    /// physics before they are added, which keeps them far below `Int.max`
    /// (`docs/metrics.md`, "Overflow"); saturation is the guarantee that no input can
    /// make a merge trap all the same.
    @inlinable
    public func addingSaturated(_ other: Int) -> Int {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }

    /// `self × other`, clamped to `Int.min...Int.max` instead of trapping.
    @inlinable
    public func multipliedSaturated(by other: Int) -> Int {
        let (product, overflow) = multipliedReportingOverflow(by: other)
        return overflow ? ((self < 0) == (other < 0) ? .max : .min) : product
    }
}
