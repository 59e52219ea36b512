extension Duration {
    /// The duration in whole nanoseconds, clamped to `0...maximum`: a negative duration is 0, one too long for
    /// `maximum` (or for `UInt64`) is `maximum`. No arithmetic here can overflow, whatever the duration.
    func nanoseconds(clampedTo maximum: UInt64 = .max) -> UInt64 {
        let (seconds, attoseconds) = components
        // Both components have the sign of the whole duration (or are 0); `attoseconds` is under a second.
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return maximum }
        let (total, carry) = whole.addingReportingOverflow(UInt64(attoseconds / 1_000_000_000))
        return carry ? maximum : min(total, maximum)
    }
}

extension UInt64 {
    /// `self + other`, or `UInt64.max` when that overflows (for deadlines computed from user durations).
    func saturatingAdd(_ other: UInt64) -> UInt64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? .max : sum
    }
}
