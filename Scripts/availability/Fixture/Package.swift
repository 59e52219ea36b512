// swift-tools-version:6.0
// The self-test's package (Scripts/check-availability.sh --self-test): Errors.swift holds uses the check must
// report (expected.txt lists them), Guarded.swift the same uses guarded, which it must not report.
import PackageDescription

let package = Package(
    name: "AvailabilityFixture",
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .watchOS(.v10), .visionOS(.v1)],
    targets: [
        .target(name: "Fixture")
    ],
    swiftLanguageModes: [.v6]
)
