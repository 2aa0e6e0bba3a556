// swift-tools-version: 6.2
// Framescope's device side: what an app or its test target links (the engine, the in-app
// SDK, scroll scripts and their runner, budget assertions) and the pure modules beside
// them (simulation, recordings, JSON). It depends on swift-atomics alone, so an app that
// adds this repository by URL resolves and clones nothing else. The collector, its stores,
// the dashboard and the `framescope` command are the package in Server/, which depends on
// this one by path (docs/architecture.md).
import PackageDescription

let package = Package(
    name: "Framescope",
    // iOS 17: the lowest target the device modules type-check at against the iOS 17 SDK
    // (`MainActor.assumeIsolated` in the display-link and run-loop glue; below it `Clock`
    // and `Duration` hold iOS 16, `CAFrameRateRange` iOS 15; docs/decisions.md, "The device
    // package"); macOS 14 for the tests on a Mac.
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .library(name: "FramescopeCore", targets: ["FramescopeCore"]),
        .library(name: "FramescopeSDK", targets: ["FramescopeSDK"]),
        .library(name: "FramescopeScroll", targets: ["FramescopeScroll"]),
        .library(name: "FramescopeScrollRunner", targets: ["FramescopeScrollRunner"]),
        .library(name: "FramescopeTesting", targets: ["FramescopeTesting"]),
        .library(name: "FramescopeSimulation", targets: ["FramescopeSimulation"]),
        .library(name: "FramescopeTraces", targets: ["FramescopeTraces"]),
        .library(name: "FramescopeJSON", targets: ["FramescopeJSON"]),
        .library(name: "FramescopeSymbols", targets: ["FramescopeSymbols"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-atomics", from: "1.3.0"),
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
        // Reading symbol tables from Mach-O and ELF files (symbol upload, hang stacks):
        // standard library only.
        .target(name: "FramescopeSymbols"),
        // Reading recorded traces (Framescope CSV/JSON and other tools') from bytes and files.
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
        // The stack sampler's C: a checked frame-pointer walk (both systems) and, on Linux, the
        // signal-based sampler, the images (dl_iterate_phdr) and stack bounds
        // (Sources/FramescopeSDK/Stacks/ is its Swift side).
        .target(name: "CFramescopeStack", cSettings: [.define("_GNU_SOURCE")]),
        // The in-app SDK: hang watchdog, resource sampler, screen tracker and delivery
        // (Foundation and Dispatch; the UIKit glue compiles only where UIKit exists).
        .target(
            name: "FramescopeSDK",
            dependencies: [
                "FramescopeCore", "CFramescopeZlib", "CFramescopeStack",
                .product(name: "Atomics", package: "swift-atomics"),
            ]
        ),
        .testTarget(name: "FramescopeCoreTests", dependencies: ["FramescopeCore", "FramescopeSimulation"]),
        .testTarget(name: "FramescopeSimulationTests", dependencies: ["FramescopeCore", "FramescopeScroll", "FramescopeSimulation"]),
        .testTarget(name: "FramescopeTracesTests", dependencies: ["FramescopeCore", "FramescopeTraces", "FramescopeSimulation"],
                    // Chrome traces recorded here, read from the source tree like ../shared/corpus.
                    exclude: ["Recordings"]),
        .testTarget(name: "FramescopeJSONTests", dependencies: ["FramescopeJSON"]),
        // Real object files from ../shared/binaries (read from the source tree like ../shared/corpus).
        .testTarget(name: "FramescopeSymbolsTests", dependencies: ["FramescopeSymbols"]),
        .testTarget(name: "FramescopeTestingTests", dependencies: ["FramescopeCore", "FramescopeTesting", "FramescopeScroll", "FramescopeScrollRunner", "FramescopeSimulation"]),
        .testTarget(name: "FramescopeScrollTests", dependencies: ["FramescopeCore", "FramescopeScroll"]),
        // The SDK's own tests (state machines at given times, and real threads); its tests
        // against a running collector and in a stopped process are in Server/.
        .testTarget(name: "FramescopeSDKTests", dependencies: ["FramescopeSDK", "FramescopeCore", "FramescopeSimulation", "CFramescopeStack"]),
    ],
    swiftLanguageModes: [.v6]
)
