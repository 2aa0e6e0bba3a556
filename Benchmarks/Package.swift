// swift-tools-version: 6.1
// Benchmarks for Framescope, kept in their own package so the main build and the
// test run never compile ordo-one/benchmark. Run from this folder:
//   swift package --allow-writing-to-package-directory benchmark
//   swift run -c release SDKFigures          (the SDK's watchdog CPU and memory)
import PackageDescription

let package = Package(
    name: "FramescopeBenchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "Framescope", path: ".."),
        .package(name: "FramescopeServer", path: "../Server"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "EngineBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "FramescopeCore", package: "Framescope"),
                .product(name: "FramescopeSimulation", package: "Framescope"),
            ],
            path: "Benchmarks/EngineBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "SDKBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "FramescopeCore", package: "Framescope"),
                .product(name: "FramescopeSDK", package: "Framescope"),
            ],
            path: "Benchmarks/SDKBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "CollectorBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "FramescopeCore", package: "Framescope"),
                .product(name: "FramescopeSimulation", package: "Framescope"),
                .product(name: "FramescopeCollector", package: "FramescopeServer"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Benchmarks/CollectorBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // Prints the SDK's watchdog CPU use and memory: `swift run -c release SDKFigures`.
        .executableTarget(
            name: "SDKFigures",
            dependencies: [
                .product(name: "FramescopeCore", package: "Framescope"),
                .product(name: "FramescopeSDK", package: "Framescope"),
            ],
            path: "Sources/SDKFigures"
        ),
    ],
    swiftLanguageModes: [.v6]
)
