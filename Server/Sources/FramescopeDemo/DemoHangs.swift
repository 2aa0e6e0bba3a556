import FramescopeCollector
import FramescopeCore

/// The demo's hang stacks: each simulated hang gets the main thread's samples at a site of
/// its screen, in an app image whose build id is one per release, with the releases'
/// symbol tables stored, so that the Hangs page shows named, merged groups. Feed hangs in
/// `FeedViewController.decodeThumbnails(_:)` from 3.1.0 on (the release that made Feed
/// slower), in `ImageCache.lookup(_:)` before; Checkout's are a few fatal hangs too.
/// Plausible, not measured: the stacks are made up, as the fleet is.
enum DemoHangs {
    /// A function of the demo app: where it starts and how long it is, in bytes.
    struct Function {
        var name: String
        var offset: UInt64
        var size: UInt64
    }

    static let main = Function(name: "main", offset: 0x1_0000, size: 0x100)
    static let feedViewDidLoad = Function(name: "FeedViewController.viewDidLoad()", offset: 0x3_0000, size: 0x400)
    static let decodeThumbnails = Function(name: "FeedViewController.decodeThumbnails(_:)", offset: 0x3_1000, size: 0x800)
    static let cacheLookup = Function(name: "ImageCache.lookup(_:)", offset: 0x3_2000, size: 0x300)
    static let searchChanged = Function(name: "SearchViewController.textDidChange(_:)", offset: 0x4_1000, size: 0x200)
    static let rebuildIndex = Function(name: "SearchIndex.rebuild()", offset: 0x4_0000, size: 0x1000)
    static let chatAppear = Function(name: "ChatViewController.viewWillAppear(_:)", offset: 0x5_1000, size: 0x200)
    static let loadHistory = Function(name: "MessageStore.loadHistory(before:)", offset: 0x5_0000, size: 0x900)
    static let payTapped = Function(name: "CheckoutViewController.payTapped(_:)", offset: 0x6_1000, size: 0x300)
    static let validateCard = Function(name: "PaymentSheet.validate(card:)", offset: 0x6_0000, size: 0x600)
    static let all = [main, feedViewDidLoad, decodeThumbnails, cacheLookup, rebuildIndex, searchChanged, loadHistory, chatAppear,
                      validateCard, payTapped]

    /// The system's UI framework (no symbols: the page shows its offsets).
    static let system = HangStack.Image(id: "9c1f0d2e4b5a46e7a8b9c0d1e2f30415", name: "UIKitCore", size: 32 << 20, app: false)

    /// The app's image in `version`: a build id of its own per release, as every build has.
    static func appImage(version: String) -> HangStack.Image {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in version.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        let hex = String(hash, radix: 16)
        let id = "d3e0" + String(repeating: "0", count: 16 - hex.count) + hex + "5a7c0de0b1"
        return HangStack.Image(id: String(id.prefix(32)), name: "DemoApp", size: 1 << 20, app: true)
    }

    /// The uploads for `versions`: the app image of each with every function's symbol.
    static func symbols(versions: [String]) -> [SymbolUpload.Image] {
        versions.map { version in
            SymbolUpload.Image(id: appImage(version: version).id, name: "DemoApp", arch: "arm64",
                               symbols: all.sorted { $0.offset < $1.offset }.map { SymbolUpload.Symbol(offset: $0.offset, size: $0.size, name: $0.name) })
        }
    }

    /// The site (slow function) and its caller for a hang on `screen` in `version`, or `nil`
    /// for a hang in the system's code (other screens', one Search hang in six).
    static func site(screen: String, version: String, seed: Int) -> (site: Function, caller: Function)? {
        switch screen {
        case "Feed": version >= "3.1.0" && seed % 5 != 0 ? (decodeThumbnails, feedViewDidLoad) : (cacheLookup, feedViewDidLoad)
        case "Search": seed % 6 == 0 ? nil : (rebuildIndex, searchChanged)
        case "Chat": (loadHistory, chatAppear)
        case "Checkout": (validateCard, payTapped)
        default: nil
        }
    }

    /// A hang's stack: a sample every 0.1 s of `duration` (at most 20), each
    /// `UIKitCore leaf ← site ← caller ← UIKitCore run loop ← main`; in hangs of five samples
    /// or more, one in seven sampled in the caller itself (the slow function had returned
    /// for a moment).
    static func stack(screen: String, version: String, duration: Double, seed: Int) -> HangStack {
        let app = appImage(version: version)
        let samples = max(1, min(20, Int(duration / 0.1)))
        guard let (site, caller) = site(screen: screen, version: version, seed: seed) else {
            // A synchronous call into the system: no frame of the app's in the samples.
            let frames = [HangStack.Frame(image: 0, offset: 0x4_1200), HangStack.Frame(image: 0, offset: 0x1_0a40)]
            return HangStack(images: [system], frames: frames,
                             samples: (0..<samples).map { HangStack.Sample(at: Double($0) / 10, frames: [0, 1]) })
        }
        let frames = [
            HangStack.Frame(image: 1, offset: 0x8_4410),                          // 0: UIKitCore, the leaf
            HangStack.Frame(image: 0, offset: site.offset + 0x64 + UInt64(seed % 4) * 8), // 1: the site
            HangStack.Frame(image: 0, offset: caller.offset + 0x40),              // 2: its caller
            HangStack.Frame(image: 1, offset: 0x1_0a40),                          // 3: UIKitCore's run loop
            HangStack.Frame(image: 0, offset: main.offset + 0x30),                // 4: main
        ]
        let list = (0..<samples).map { index in
            HangStack.Sample(at: Double(index) / 10, frames: samples >= 5 && (index + seed) % 7 == 3 ? [2, 3, 4] : [0, 1, 2, 3, 4])
        }
        return HangStack(images: [app, system], frames: frames, samples: list)
    }
}
