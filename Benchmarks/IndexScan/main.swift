// Times `JSONParser.parse` against the index scan (`JSONIndex`) and the bare scan (`JSONParser.scan` building nothing)
// on the benchmark program's "10 MB" store file, and reports the index's memory per member; then times the image of
// the indexed file (`FileImage(index:)`, which adopts the file's buffer) and one change applied to images of 10k and
// 151k members. Built and run by Scripts/index-timing.sh, which compiles this file
// together with the parser's sources and the benchmark program's fixtures (the scanner is internal to the library,
// so the benchmark program, which imports it as a client, cannot call it).

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What Fixtures.swift needs of the benchmark program's other files (which need the library as a module).
struct BenchmarkError: Error {
    let description: String
    init(_ description: String) { self.description = description }
    static func system(_ call: String, _ path: String) -> BenchmarkError { BenchmarkError("\(call) \(path) failed") }
}

/// The value shapes of Fixtures.swift's naive-pattern dictionary, which this program does not use.
indirect enum AnyJSON {
    case integer(Int), string(String), array([AnyJSON]), object([String: AnyJSON])
}

/// The monotonic clock in nanoseconds.
func now() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// The fastest of `rounds` runs of `body`, in milliseconds.
func fastest(_ rounds: Int, _ body: () throws -> Void) rethrows -> Double {
    var best = UInt64.max
    for _ in 0..<rounds {
        let start = now()
        try body()
        best = min(best, now() - start)
    }
    return Double(best) / 1_000_000
}

/// A sink that only counts members: the scan with nothing built, the floor for the index.
struct CountingSink: ParsedMemberSink {
    /// The members seen.
    var count = 0

    mutating func insertName(_ key: Range<Int>, hasEscapes: Bool) -> Bool { true }

    mutating func append(value: Range<Int>, hasWhitespace: Bool) { count += 1 }
}

/// The fastest, in microseconds, of `rounds` applications of one change to the image of a store file of `keys`
/// members: a value of another length (spliced), and a new key added or removed again (a rebuild).
func applyTimes(keys: Int, rounds: Int) throws -> (splice: Double, rebuild: Double) {
    var image = FileImage(index: try JSONIndex(bytes: Fixture.storeFile(keys: keys)))
    let middle = SampleValue.key(keys / 2)
    let added = SampleValue.key(keys / 3) + "x"
    var splice = UInt64.max
    var rebuild = UInt64.max
    for round in 0..<rounds {
        var start = now()
        image.apply([(name: middle, value: Array((round % 2 == 0 ? "[1,2,3]" : "12").utf8))])
        splice = min(splice, now() - start)
        start = now()
        image.apply([(name: added, value: round % 2 == 0 ? Array("1".utf8) : nil)])
        rebuild = min(rebuild, now() - start)
    }
    return (Double(splice) / 1000, Double(rebuild) / 1000)
}

@main
enum IndexScanTiming {
    static func main() throws {
        let keys = Fixture.keys(forBytes: 10_000_000)
        let file = Fixture.storeFile(keys: keys)
        let rounds = 7
        var members = 0
        // `index-timing index` times the index scan alone (for a profiler).
        let indexOnly = CommandLine.arguments.dropFirst().first == "index"
        let parse = try fastest(indexOnly ? 1 : rounds) { members = try JSONParser.parse(file).count }
        var index: JSONIndex?
        let scan = try fastest(rounds) { index = try JSONIndex(bytes: file) }
        var bareMembers = 0
        let bare = try fastest(rounds) {
            var sink = CountingSink()
            try file.withUnsafeBytes { buffer in try JSONParser.scan(buffer, into: &sink) }
            bareMembers = sink.count
        }
        guard let index, index.count == members, bareMembers == members else {
            throw BenchmarkError("the index and parse disagree")
        }
        let lookup = fastest(rounds) {
            for number in stride(from: 0, to: keys, by: 97) where index.position(of: SampleValue.key(number)) == nil {
                fatalError("lost key \(number)")
            }
        }
        var image = FileImage()
        let adopt = fastest(rounds) { image = FileImage(index: index) }
        let adopted = image.bytes.withUnsafeBufferPointer { image in
            index.bytes.withUnsafeBufferPointer { $0.baseAddress == image.baseAddress }
        }
        guard adopted, image.count == members else { throw BenchmarkError("the image did not adopt the file") }
        let indexBytes = index.spans.capacity * 4 + index.slots.capacity * 8
        print("store file: \(file.count) bytes, \(members) members; fastest of \(rounds) runs")
        print("JSONParser.parse:  \(parse) ms")
        print("JSONIndex:   \(scan) ms (\(parse / scan)x faster)")
        print("the scan alone (members counted, nothing kept): \(bare) ms")
        print("lookup of \(keys / 97 + 1) keys: \(lookup) ms")
        print("FileImage(index:), adopting the file's bytes: \(adopt) ms")
        for count in [10_000, keys] {
            let (splice, rebuild) = try applyTimes(keys: count, rounds: indexOnly ? 2 : 400)
            print("apply one change to \(count) members: a value \(splice) us, a new key \(rebuild) us")
        }
        print(
            "index memory: \(indexBytes) bytes (\(Double(indexBytes) / Double(members)) bytes per member, "
                + "\(Double(indexBytes) / Double(file.count)) of the file size), plus the file's bytes")
    }
}
