// swift-tools-version: 6.1
// Benchmarks for Framescope, kept in their own package so the main build and the
// test run never compile ordo-one/benchmark. Run from this folder:
//   swift package --allow-writing-to-package-directory benchmark
import PackageDescription

let package = Package(
    name: "FramescopeBenchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "Framescope", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "EngineBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "FramescopeCore", package: "Framescope"),
            ],
            path: "Benchmarks/EngineBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
