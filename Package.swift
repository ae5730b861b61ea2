// swift-tools-version:6.0
// SwiftPM reads a package's manifest at its repository's root only, so SvcAttribution's lives here;
// its code is under sdk/ios (README there), and its tests also read the shared cases in sdk/vectors.
import PackageDescription

let package = Package(
    name: "SvcAttribution",
    platforms: [.iOS(.v15), .macOS(.v12)],
    products: [
        .library(name: "SvcAttribution", targets: ["SvcAttribution"]),
    ],
    targets: [
        .target(
            name: "SvcAttribution",
            path: "sdk/ios/Sources/SvcAttribution",
            resources: [.copy("PrivacyInfo.xcprivacy")]
        ),
        .testTarget(
            name: "SvcAttributionTests",
            dependencies: ["SvcAttribution"],
            path: "sdk/ios/Tests/SvcAttributionTests"
        ),
    ]
)
