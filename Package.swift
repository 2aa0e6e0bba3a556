// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Framescope",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .library(name: "FramescopeCore", targets: ["FramescopeCore"]),
        .library(name: "FramescopeTraces", targets: ["FramescopeTraces"]),
        .library(name: "FramescopeTesting", targets: ["FramescopeTesting"]),
        .executable(name: "framescope", targets: ["framescope"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        // Ticks in, reports out: standard library only.
        .target(name: "FramescopeCore"),
        // Reading recorded traces (Framescope CSV/JSON) from bytes and files.
        .target(name: "FramescopeTraces", dependencies: ["FramescopeCore"]),
        // Budget assertions for Swift Testing and XCTest.
        .target(name: "FramescopeTesting", dependencies: ["FramescopeCore"]),
        .executableTarget(
            name: "framescope",
            dependencies: [
                "FramescopeCore",
                "FramescopeTraces",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(name: "FramescopeCoreTests", dependencies: ["FramescopeCore"]),
        .testTarget(name: "FramescopeTracesTests", dependencies: ["FramescopeCore", "FramescopeTraces"]),
        .testTarget(name: "FramescopeTestingTests", dependencies: ["FramescopeCore", "FramescopeTesting"]),
        .testTarget(name: "FramescopeCLITests", dependencies: ["framescope", "FramescopeCore"]),
    ],
    swiftLanguageModes: [.v6]
)
