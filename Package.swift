// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "CodableDefaults",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "CodableDefaults", targets: ["CodableDefaults"]),
        .executable(name: "codable-defaults", targets: ["codable-defaults"]),
    ],
    dependencies: [],
    targets: [
        .target(name: "CodableDefaults"),
        .executableTarget(name: "codable-defaults", dependencies: ["CodableDefaults"]),
        .executableTarget(name: "codable-defaults-example", dependencies: ["CodableDefaults"]),
        // Opens a store and acts on commands; the multi-process and crash tests run it as a real process.
        .executableTarget(name: "codable-defaults-fixture", dependencies: ["CodableDefaults"]),
        .executableTarget(
            name: "CodableDefaultsBenchmarks", dependencies: ["CodableDefaults"],
            path: "Benchmarks/CodableDefaultsBenchmarks"),
        .testTarget(
            name: "CodableDefaultsTests",
            dependencies: ["CodableDefaults", "codable-defaults", "codable-defaults-fixture"]),
    ],
    swiftLanguageModes: [.v6]
)

for target in package.targets {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    target.swiftSettings = settings
}
