/// How long a store on etcd waits for one endpoint before it tries the next, as etcdctl's `--dial-timeout` and
/// `--command-timeout` (with their defaults: 2 and 5 seconds).
///
/// ```swift
/// let timeouts = EtcdTimeouts(connect: .milliseconds(500), request: .seconds(3))
/// ```
///
/// Each bounds one endpoint's try: a store with three endpoints none of which answers waits up to three times
/// `request` before a save fails. A watch connects within `connect` and then waits for messages without bound
/// (etcd sends one at least every ten minutes; a watch silent for fifteen is taken for a lost connection).
public struct EtcdTimeouts: Sendable, Hashable {
    /// How long connecting to an endpoint (with the TLS handshake) may take. Default: 2 seconds. On Apple platforms
    /// `URLSession` has no connect timeout of its own: ``request`` bounds the connection too.
    public var connect: Duration
    /// How long one request to an endpoint may wait for its answer, connecting included. Default: 5 seconds.
    public var request: Duration

    /// Timeouts; each more than zero (checked when the store opens: `invalidArgument`).
    public init(connect: Duration = .seconds(2), request: Duration = .seconds(5)) {
        self.connect = connect
        self.request = request
    }

    /// `duration` in seconds.
    static func seconds(_ duration: Duration) -> Double {
        let parts = duration.components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
