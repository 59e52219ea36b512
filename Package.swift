// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "CodableDefaults",
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .watchOS(.v10), .visionOS(.v1)],
    products: [
        .library(name: "CodableDefaults", targets: ["CodableDefaults"]),
        .executable(name: "codable-defaults", targets: ["codable-defaults"]),
        // The store on an etcd cluster: its own product, so that apps using only the file store link no networking.
        .library(name: "CodableDefaultsEtcd", targets: ["CodableDefaultsEtcd"]),
    ],
    dependencies: [],
    targets: [
        .target(name: "CodableDefaults", dependencies: ["CodableDefaultsThreadLocal"]),
        // One C thread-local counter, read on every value read (see Observation/Store+ObservationTracking.swift).
        .target(name: "CodableDefaultsThreadLocal"),
        // The tool links the etcd store too (for `--etcd URLS --prefix P`), and with it FoundationNetworking.
        .executableTarget(name: "codable-defaults", dependencies: ["CodableDefaults", "CodableDefaultsEtcd"]),
        // etcd's JSON gateway: over URLSession on Apple platforms; on Linux, http:// over a socket and https:// calls
        // through libcurl (loaded at run time), https:// watches through URLSession (FoundationNetworking, which
        // only this target links). See EtcdClient.swift.
        .target(name: "CodableDefaultsEtcd", dependencies: ["CodableDefaults", "CodableDefaultsCurlShim"]),
        // C calls of libcurl's variadic setopt and getinfo, which Swift cannot make (CodableDefaultsEtcd's CurlHTTP).
        .target(name: "CodableDefaultsCurlShim"),
        .executableTarget(name: "codable-defaults-example", dependencies: ["CodableDefaults"]),
        // Opens a store and acts on commands; the multi-process and crash tests run it as a real process.
        .executableTarget(name: "codable-defaults-fixture", dependencies: ["CodableDefaults"]),
        // The same for a store on etcd, for the multi-process tests of the etcd store.
        .executableTarget(
            name: "codable-defaults-etcd-fixture", dependencies: ["CodableDefaults", "CodableDefaultsEtcd"]),
        .executableTarget(
            name: "CodableDefaultsBenchmarks", dependencies: ["CodableDefaults", "CodableDefaultsEtcd"],
            path: "Benchmarks/CodableDefaultsBenchmarks"),
        // The tests, in layers that `swift test --filter` selects by target name (README, "Run and test"):
        // fast in-process unit tests; tests that start processes (the built tool, the fixture); and tests of
        // the system underneath (strace fault injection, file modes and owners, root-only file systems).
        // What the layers share (temporary directories, child processes, fixtures): a plain target in no product,
        // not a test target (Xcode refuses a test target that other test targets depend on). It uses only the
        // library's public and `package` declarations, so a release build builds it too, and imports no Testing.
        .target(
            name: "CodableDefaultsTestSupport", dependencies: ["CodableDefaults"],
            path: "Tests/CodableDefaultsTestSupport"),
        .testTarget(name: "CodableDefaultsTests", dependencies: ["CodableDefaults", "CodableDefaultsTestSupport"]),
        .testTarget(
            name: "CodableDefaultsProcessTests",
            dependencies: [
                "CodableDefaults", "CodableDefaultsTestSupport", "codable-defaults", "codable-defaults-fixture",
            ]),
        .testTarget(
            name: "CodableDefaultsSystemTests",
            dependencies: [
                "CodableDefaults", "CodableDefaultsTestSupport", "codable-defaults", "codable-defaults-fixture",
            ]),
        // Tests against a real etcd that they start themselves (/usr/bin/etcd, or $ETCD_BINARY).
        .testTarget(
            name: "CodableDefaultsEtcdTests",
            dependencies: [
                "CodableDefaults", "CodableDefaultsEtcd", "CodableDefaultsTestSupport", "codable-defaults",
                "codable-defaults-etcd-fixture",
            ]),
    ],
    swiftLanguageModes: [.v6]
)

for target in package.targets {
    var settings = target.swiftSettings ?? []
    // What only tests use (the fault plan of the file layer's system calls, the store's counters; the library's
    // `Testing/` folder) is compiled in debug builds only, as swift-system compiles its mocking.
    settings.append(.define("CODABLE_DEFAULTS_TESTING", .when(configuration: .debug)))
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    target.swiftSettings = settings
}
