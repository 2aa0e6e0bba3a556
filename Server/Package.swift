// swift-tools-version: 6.2
// Framescope's server side: the collector, its stores (SQLite, ClickHouse), the dashboard,
// renderer recordings and the `framescope` command, with the SDK's tests that need a running
// collector or a process of their own. It depends on the device package (the repository
// root) by path; an app never resolves this manifest (docs/architecture.md).
// From the repository root: swift run --package-path Server framescope serve --demo
import PackageDescription

let package = Package(
    name: "FramescopeServer",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "FramescopeCollector", targets: ["FramescopeCollector"]),
        .library(name: "FramescopeDashboard", targets: ["FramescopeDashboard"]),
        .library(name: "FramescopeClickHouse", targets: ["FramescopeClickHouse"]),
        .executable(name: "framescope", targets: ["framescope"]),
    ],
    dependencies: [
        .package(name: "Framescope", path: ".."),
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
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
    ],
    targets: [
        // The SDK's public API driven by simulated ticks against a running collector.
        .executableTarget(
            name: "FramescopeExample",
            dependencies: [
                // The SDK alone, as an app adds it: it brings FramescopeCore and Foundation.
                .product(name: "FramescopeSDK", package: "Framescope"),
                .product(name: "FramescopeSimulation", package: "Framescope"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Examples/FramescopeExample"
        ),
        // Runs a hang watchdog on a healthy queue; the SDK tests stop and continue it with signals.
        .executableTarget(name: "FramescopeWatchdogProbe", dependencies: [.product(name: "FramescopeSDK", package: "Framescope")]),
        // The collector's rules and values, without IO (issue 44, item 1): the store roles,
        // query and batch values, `StoreError`, the ingest planner and cardinality ledger, key
        // rotation, rollups, hang summaries and groups, thresholds, sampling, the symbol
        // tables. Imports Core, JSON, Traces (MetricKit's records) and Crypto (key digests);
        // scripts/check-imports holds it to that (WALLS).
        .target(
            name: "FramescopeStore",
            dependencies: [
                .product(name: "FramescopeCore", package: "Framescope"),
                .product(name: "FramescopeJSON", package: "Framescope"),
                .product(name: "FramescopeTraces", package: "Framescope"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The collector's store on SQLite (GRDB): `SQLiteStore` by concern, its frozen
        // migrations, SQLite's errors as store errors, the SQLite cardinality gate.
        .target(
            name: "FramescopeSQLite",
            dependencies: [
                "FramescopeStore",
                .product(name: "FramescopeCore", package: "Framescope"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The collector: HTTP routes, ingest and services over a store (SQLite by default).
        .target(
            name: "FramescopeCollector",
            dependencies: [
                "FramescopeStore",
                "FramescopeSQLite",
                .product(name: "FramescopeCore", package: "Framescope"),
                .product(name: "FramescopeJSON", package: "Framescope"),
                .product(name: "FramescopeTraces", package: "Framescope"),
                .product(name: "Hummingbird", package: "hummingbird"),
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
        // The demo app's data (`framescope serve --demo`, the dashboard's tests): simulated
        // visits and hangs written through a store; the collector itself never links the simulator.
        .target(
            name: "FramescopeDemo",
            dependencies: [
                "FramescopeCollector",
                .product(name: "FramescopeCore", package: "Framescope"),
                .product(name: "FramescopeSimulation", package: "Framescope"),
                .product(name: "FramescopeTraces", package: "Framescope"),
            ]
        ),
        // The collector's store on ClickHouse: its HTTP interface (async-http-client),
        // RowBinary inserts, literals and locations (docs/dev-notes/clickhouse-schema.md).
        .target(
            name: "FramescopeClickHouse",
            dependencies: [
                "FramescopeStore",
                .product(name: "FramescopeCore", package: "Framescope"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        // The dashboard: HTML pages with server-drawn SVG charts, served by the collector.
        .target(
            name: "FramescopeDashboard",
            dependencies: [
                .product(name: "FramescopeCore", package: "Framescope"),
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
                .product(name: "FramescopeCore", package: "Framescope"),
                .product(name: "FramescopeScroll", package: "Framescope"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "framescope",
            dependencies: [
                .product(name: "FramescopeCore", package: "Framescope"),
                .product(name: "FramescopeScroll", package: "Framescope"),
                .product(name: "FramescopeSimulation", package: "Framescope"),
                .product(name: "FramescopeTraces", package: "Framescope"),
                .product(name: "FramescopeSymbols", package: "Framescope"),
                "FramescopeRecording",
                .product(name: "CompressNIO", package: "compress-nio"),
                "FramescopeCollector",
                "FramescopeDemo",
                "FramescopeClickHouse",
                "FramescopeDashboard",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        // Starting the package's built executables from tests and reading their output.
        .target(name: "FramescopeProcessTesting", path: "Tests/ProcessTesting"),
        // The SDK against a running collector (delivery, the public API, lifecycle) and in a
        // process stopped and continued with signals.
        .testTarget(
            name: "FramescopeSDKIntegrationTests",
            dependencies: [
                .product(name: "FramescopeSDK", package: "Framescope"),
                .product(name: "FramescopeCore", package: "Framescope"),
                .product(name: "FramescopeSimulation", package: "Framescope"),
                "FramescopeCollector", "FramescopeProcessTesting", "FramescopeWatchdogProbe",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .testTarget(name: "FramescopeCLITests", dependencies: ["framescope", "FramescopeExample", "FramescopeStore", "FramescopeSQLite",
                                                     .product(name: "FramescopeCore", package: "Framescope"),
                                                     .product(name: "FramescopeSimulation", package: "Framescope"),
                                                     "FramescopeProcessTesting", "FramescopeCollector", "FramescopeClickHouse", "FramescopeClickHouseTesting",
                                                     .product(name: "Hummingbird", package: "hummingbird"),
                                                     .product(name: "NIOCore", package: "swift-nio")],
                    exclude: ["Fixtures"]),
        // Real ClickHouse servers and ZooKeeper for tests, started and stopped by process id
        // (Debian's clickhouse-server and zookeeper; scripts/test installs them).
        .target(name: "FramescopeClickHouseTesting", dependencies: ["FramescopeClickHouse"], path: "Tests/ClickHouseTesting"),
        .testTarget(name: "FramescopeClickHouseTests", dependencies: ["FramescopeClickHouse", "FramescopeClickHouseTesting", "FramescopeCollector", "FramescopeStore", "FramescopeSQLite",
                                                            .product(name: "FramescopeCore", package: "Framescope"),
                                                            .product(name: "FramescopeSimulation", package: "Framescope")],
                    exclude: ["Fixtures"]),
        .testTarget(
            name: "FramescopeCollectorTests",
            dependencies: [
                "FramescopeCollector", "FramescopeDashboard", "FramescopeClickHouse", "FramescopeClickHouseTesting", "FramescopeDemo", "FramescopeStore", "FramescopeSQLite",
                .product(name: "FramescopeCore", package: "Framescope"),
                .product(name: "FramescopeTraces", package: "Framescope"),
                .product(name: "FramescopeSimulation", package: "Framescope"),
                .product(name: "FramescopeJSON", package: "Framescope"),
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
