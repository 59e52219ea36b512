import Dispatch

extension Store {
    /// Arranges a save once the store has been idle for `delay` (and at the latest `SaveTimer.maximumWait`
    /// after the first unsaved change).
    func scheduleSave(after delay: Duration) {
        let now = DispatchTime.now()
        let arm: DispatchTime? = state.withLock { $0.timer.change(at: now, delay: delay) }
        if let arm { schedule(at: arm) }
    }

    private func schedule(at deadline: DispatchTime) {
        queue.asyncAfter(deadline: deadline) { [weak self] in self?.timerFired() }
    }

    private func timerFired() {
        let now = DispatchTime.now()
        let next: DispatchTime? = state.withLock { $0.timer.fire(at: now) }
        if let next {
            schedule(at: next)
            return
        }
        do {
            try save()
            state.withLock { $0.timer.succeeded() }
        } catch {
            report(error)
            let retry = state.withLock { $0.timer.failed(at: DispatchTime.now()) }
            schedule(at: retry)
        }
    }
}

/// The bookkeeping of the `.afterIdle` save timer. At most one timer is armed at a time.
struct SaveTimer {
    /// The longest a stream of changes can delay a save (unless the idle delay itself is longer).
    static let maximumWait: UInt64 = 5_000_000_000
    /// The longest idle delay: longer `.afterIdle` durations count as this (see ``Defaults/SaveMode``).
    static let maximumDelay: UInt64 = 86_400_000_000_000

    private var armed = false
    private var delay: UInt64 = 0
    private var lastChange: UInt64 = 0
    private var firstChange: UInt64 = 0
    private var retryDelay: UInt64 = 0

    /// Whether a timer is armed.
    var isArmed: Bool { armed }

    /// Records a change; returns the deadline to arm the timer at, or `nil` when it is already armed.
    mutating func change(at now: DispatchTime, delay: Duration) -> DispatchTime? {
        self.delay = Self.nanoseconds(delay)
        lastChange = now.uptimeNanoseconds
        guard !armed else { return nil }
        armed = true
        firstChange = lastChange
        return DispatchTime(uptimeNanoseconds: Self.adding(lastChange, self.delay))
    }

    /// The timer fired: returns a later deadline if the store has not been idle long enough, or `nil` to
    /// save now.
    mutating func fire(at now: DispatchTime) -> DispatchTime? {
        let due = min(Self.adding(lastChange, delay), Self.adding(firstChange, max(Self.maximumWait, delay)))
        if now.uptimeNanoseconds < due { return DispatchTime(uptimeNanoseconds: due) }
        armed = false
        return nil
    }

    /// The save succeeded: the retry back-off starts over.
    mutating func succeeded() { retryDelay = 0 }

    /// The save failed: returns when to retry (doubling from one second up to five minutes).
    mutating func failed(at now: DispatchTime) -> DispatchTime {
        retryDelay = min(max(retryDelay * 2, 1_000_000_000), 300_000_000_000)
        armed = true
        lastChange = now.uptimeNanoseconds
        firstChange = lastChange
        delay = retryDelay
        return DispatchTime(uptimeNanoseconds: Self.adding(now.uptimeNanoseconds, retryDelay))
    }

    /// A duration in nanoseconds, clamped to `0...maximumDelay` (a negative duration is no delay), with no
    /// arithmetic that can overflow.
    static func nanoseconds(_ duration: Duration) -> UInt64 {
        duration.nanoseconds(clampedTo: maximumDelay)
    }

    /// `a + b`, or the largest time when that overflows.
    private static func adding(_ a: UInt64, _ b: UInt64) -> UInt64 {
        a.saturatingAdd(b)
    }
}
