// swift-tools-version: 6.2
import PackageDescription

let package = Package(
    name: "Framescope",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .library(name: "FramescopeCore", targets: ["FramescopeCore"]),
        .library(name: "FramescopeScroll", targets: ["FramescopeScroll"]),
        .library(name: "FramescopeSimulation", targets: ["FramescopeSimulation"]),
        .library(name: "FramescopeTraces", targets: ["FramescopeTraces"]),
        .library(name: "FramescopeTesting", targets: ["FramescopeTesting"]),
        .library(name: "FramescopeScrollRunner", targets: ["FramescopeScrollRunner"]),
        .library(name: "FramescopeCollector", targets: ["FramescopeCollector"]),
        .library(name: "FramescopeDashboard", targets: ["FramescopeDashboard"]),
        .library(name: "FramescopeClickHouse", targets: ["FramescopeClickHouse"]),
        .library(name: "FramescopeSDK", targets: ["FramescopeSDK"]),
        .executable(name: "framescope", targets: ["framescope"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/adam-fowler/compress-nio", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
        .package(url: "https://github.com/apple/swift-atomics", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
    ],
    targets: [
        // Ticks in, reports out: standard library only.
        .target(name: "FramescopeCore"),
        // The frame-pipeline simulator, the thesis' scenarios and simulated fleets (demo data,
        // load tests): standard library and Core only. The SDK does not link it.
        .target(name: "FramescopeSimulation", dependencies: ["FramescopeCore", "FramescopeScroll"]),
        // Repeatable scroll scripts (steady, the thesis' accelerating timer, a fling) as exact
        // per-frame offsets and segments, for device tests, the simulator and browser
        // recordings: standard library and Core only.
        .target(name: "FramescopeScroll", dependencies: ["FramescopeCore"]),
        // One strict JSON scanner (in memory) and lexer (streaming) for the collector's wire
        // decoder and the trace readers: standard library only.
        .target(name: "FramescopeJSON"),
        // Reading recorded traces (Framescope CSV/JSON) from bytes and files.
        .target(name: "FramescopeTraces", dependencies: ["FramescopeCore", "FramescopeJSON", "CFramescopeZlib"]),
        // Budget assertions for Swift Testing and XCTest.
        .target(name: "FramescopeTesting", dependencies: ["FramescopeCore", "FramescopeScroll", "FramescopeScrollRunner"]),
        // Scroll performance tests run inside the app: a script applied to a scroll view
        // frame by frame, measured per pass (the UIKit driver compiles only where UIKit
        // is). No XCTest, so an app may link it for the XCUITest path.
        .target(name: "FramescopeScrollRunner", dependencies: ["FramescopeCore", "FramescopeScroll"]),
        // zlib, for the SDK's gzip uploads and gzipped recordings (the system's library: in
        // Apple SDKs, zlib1g-dev on Debian).
        .systemLibrary(name: "CFramescopeZlib", path: "Sources/CFramescopeZlib", pkgConfig: "zlib",
                       providers: [.apt(["zlib1g-dev"])]),
        // The in-app SDK: hang watchdog, resource sampler, screen tracker and delivery
        // (Foundation and Dispatch; the UIKit glue compiles only where UIKit exists).
        .target(
            name: "FramescopeSDK",
            dependencies: [
                "FramescopeCore", "CFramescopeZlib",
                .product(name: "Atomics", package: "swift-atomics"),
            ]
        ),
        // The SDK's public API driven by simulated ticks against a running collector.
        .executableTarget(
            name: "FramescopeExample",
            dependencies: [
                "FramescopeSDK", "FramescopeCore", "FramescopeSimulation",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Examples/FramescopeExample"
        ),
        // Runs a hang watchdog on a healthy queue; the SDK tests stop and continue it with signals.
        .executableTarget(name: "FramescopeWatchdogProbe", dependencies: ["FramescopeSDK"]),
        // The collector: ingest, rollups and queries over a store (SQLite by default).
        .target(
            name: "FramescopeCollector",
            dependencies: [
                "FramescopeCore",
                "FramescopeJSON",
                "FramescopeSimulation",
                "FramescopeTraces",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            resources: [.copy("Resources/openapi.json")]
        ),
        // The collector's store on ClickHouse: its HTTP interface (async-http-client),
        // RowBinary inserts, literals and locations (docs/dev-notes/clickhouse-schema.md).
        .target(
            name: "FramescopeClickHouse",
            dependencies: [
                "FramescopeCollector",
                "FramescopeCore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        // The dashboard: HTML pages with server-drawn SVG charts, served by the collector.
        .target(
            name: "FramescopeDashboard",
            dependencies: [
                "FramescopeCore",
                "FramescopeCollector",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Mustache", package: "swift-mustache"),
            ],
            resources: [.copy("Resources/templates"), .copy("Resources/dashboard.css"), .copy("Resources/dashboard.js")]
        ),
        // Recordings of real renderers: headless Chromium over the DevTools protocol.
        .target(
            name: "FramescopeRecording",
            dependencies: [
                "FramescopeCore",
                "FramescopeScroll",
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "framescope",
            dependencies: [
                "FramescopeCore",
                "FramescopeRecording",
                "FramescopeScroll",
                "FramescopeSimulation",
                "FramescopeTraces",
                "FramescopeCollector",
                "FramescopeClickHouse",
                "FramescopeDashboard",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .testTarget(name: "FramescopeCoreTests", dependencies: ["FramescopeCore", "FramescopeSimulation"]),
        .testTarget(name: "FramescopeSimulationTests", dependencies: ["FramescopeCore", "FramescopeScroll", "FramescopeSimulation"]),
        .testTarget(name: "FramescopeTracesTests", dependencies: ["FramescopeCore", "FramescopeTraces", "FramescopeSimulation"]),
        .testTarget(name: "FramescopeJSONTests", dependencies: ["FramescopeJSON"]),
        .testTarget(name: "FramescopeTestingTests", dependencies: ["FramescopeCore", "FramescopeTesting", "FramescopeScroll", "FramescopeScrollRunner", "FramescopeSimulation"]),
        .testTarget(name: "FramescopeScrollTests", dependencies: ["FramescopeCore", "FramescopeScroll"]),
        // Starting the package's built executables from tests and reading their output.
        .target(name: "FramescopeProcessTesting", path: "Tests/ProcessTesting"),
        .testTarget(
            name: "FramescopeSDKTests",
            dependencies: [
                "FramescopeSDK", "FramescopeCore", "FramescopeSimulation", "FramescopeCollector", "FramescopeProcessTesting",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .testTarget(name: "FramescopeCLITests", dependencies: ["framescope", "FramescopeExample", "FramescopeCore", "FramescopeSimulation", "FramescopeProcessTesting",
                                                     "FramescopeClickHouse", "FramescopeClickHouseTesting",
                                                     .product(name: "Hummingbird", package: "hummingbird"),
                                                     .product(name: "NIOCore", package: "swift-nio")],
                    exclude: ["Fixtures"]),
        // Real ClickHouse servers and ZooKeeper for tests, started and stopped by process id
        // (Debian's clickhouse-server and zookeeper; scripts/test installs them).
        .target(name: "FramescopeClickHouseTesting", dependencies: ["FramescopeClickHouse"], path: "Tests/ClickHouseTesting"),
        .testTarget(name: "FramescopeClickHouseTests", dependencies: ["FramescopeClickHouse", "FramescopeClickHouseTesting", "FramescopeCollector", "FramescopeCore", "FramescopeSimulation"],
                    exclude: ["Fixtures"]),
        .testTarget(
            name: "FramescopeCollectorTests",
            dependencies: [
                "FramescopeCollector", "FramescopeCore", "FramescopeSimulation", "FramescopeDashboard",
                "FramescopeClickHouse", "FramescopeClickHouseTesting", "FramescopeJSON",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            exclude: ["Fixtures"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
