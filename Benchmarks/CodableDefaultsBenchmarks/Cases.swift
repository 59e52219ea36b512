import Foundation

/// What every case works with: the options, the scale, the run's temporary root, and the results so far.
final class Context {
    /// The command line.
    let options: Options
    /// Sizes and sample counts.
    let scale: Scale
    /// The run's temporary directory; every case works in its own directory below it.
    let root: String
    /// The results, in the order the cases ran.
    var results = RunResults()
    private var suiteCounter = 0
    private var bigStoreCache: BigStore?

    /// Creates the context of a run.
    init(options: Options, scale: Scale, root: String) {
        self.options = options
        self.scale = scale
        self.root = root
    }

    /// Runs `body` with a new, empty directory for one case, and removes the directory afterwards (also
    /// when `body` throws).
    func withDirectory<T>(_ name: String, _ body: (TempDirectory) throws -> T) throws -> T {
        let directory = try TempDirectory(in: root, prefix: name)
        let result: T
        do {
            result = try body(directory)
        } catch {
            // The error being thrown is the one to report; a failed cleanup is only mentioned.
            do { try directory.remove() } catch let cleanup { progress("warning: \(cleanup)") }
            throw error
        }
        try directory.remove()
        return result
    }

    /// A `UserDefaults` suite name never used before in this run.
    func freshSuiteName(_ purpose: String) -> String {
        suiteCounter += 1
        return "codable-defaults-bench.\(getpid()).\(purpose).\(suiteCounter)"
    }

    /// Records a finished case and prints its table.
    func record(_ result: CaseResult) {
        results.cases.append(result)
        print(Report.table(result))
        fflush(nil)
    }

    /// The "10 MB" store shared by the open and memory cases, written once per run.
    func bigStore() throws -> BigStore {
        if let bigStoreCache { return bigStoreCache }
        progress("writing the \(format(Double(scale.bigStoreBytes), .bytes)) store file")
        let keys = Fixture.keys(forBytes: scale.bigStoreBytes)
        let path = "\(root)/big-store.json"
        try Files.write(Fixture.storeFile(keys: keys), to: path)
        let probe = (keys / 2) / 4 * 4  // a key in the middle holding an Int
        guard case .integer(let value) = SampleValue.make(probe) else {
            throw BenchmarkError("the probe key \(probe) of the big store does not hold an Int")
        }
        let store = BigStore(
            path: path, keys: keys, bytes: try Files.size(path), probeKey: SampleValue.key(probe), probeValue: value)
        bigStoreCache = store
        return store
    }
}

/// The large store file used by the open and memory cases.
struct BigStore {
    /// Its path.
    let path: String
    /// How many keys it holds.
    let keys: Int
    /// Its size in bytes.
    let bytes: Int
    /// A key in the middle of the file, holding an Int.
    let probeKey: String
    /// The Int stored under ``probeKey``.
    let probeValue: Int
}

/// The cases, in the order they run.
enum CaseCatalog {
    /// Each case: its identifier and the function that runs it.
    static let all: [(id: String, run: @Sendable (Context) throws -> Void)] = [
        ("read-int", ReadCases.readInt),
        ("read-struct", ReadCases.readStruct),
        ("read-tracked", ObservableCases.readTracked),
        ("read-layered", LayerCases.readLayered),
        ("set-1k", SetCases.setSmallValue),
        ("set-growth", SetCases.setGrowth),
        ("set-constrained", ConstraintCases.setWithConstraints),
        ("save-10k", SaveCases.saveOneChange),
        ("save-size", SaveCases.saveAgainstSize),
        ("modify-1k", ModifyCases.modifyAgainstSetAndFlush),
        ("history-1k", HistoryCases.historyCost),
        ("secret-1k", SecretCases.secretCost),
        ("open-10mb", OpenCases.openBigStore),
        ("burst-afteridle", ObservationCases.burst),
        ("observer-fanout", ObservationCases.fanOut),
        ("outside-change", ObservationCases.outsideChange),
        ("memory-10mb", OpenCases.memory),
        ("etcd-store", EtcdCases.etcdStore),
        ("etcd-store-tls", EtcdTLSCases.etcdStoreTLS),
    ]

    /// The identifiers, for `--filter` and the usage text.
    static var identifiers: [String] { all.map(\.id) }
}
