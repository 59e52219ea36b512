// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "CodableDefaults",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "CodableDefaults", targets: ["CodableDefaults"])
    ],
    dependencies: [],
    targets: [
        .target(name: "CodableDefaults"),
        .executableTarget(name: "codable-defaults-example", dependencies: ["CodableDefaults"]),
        .testTarget(name: "CodableDefaultsTests", dependencies: ["CodableDefaults"]),
    ],
    swiftLanguageModes: [.v6]
)

for target in package.targets {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    target.swiftSettings = settings
}
