import FramescopeCore

/// Stacks as an SDK sends them, for the hang tests.
enum HangStackFixtures {
    /// The app's executable (`Shop`), one framework of the system's and the SDK's view of them.
    static let appImage = HangStack.Image(id: "73d406b3246a378bbefc16429a4d8133", name: "Shop", size: 1 << 20, app: true)
    /// A system library.
    static let systemImage = HangStack.Image(id: "5307fcdea6d530a49e32df2420ec6a1b", name: "UIKitCore", size: 32 << 20, app: false)

    /// A hang's stack: `samples` samples, each `system frame ← app frames… ← main`, where
    /// the app's innermost frame is `site` (an offset in `Shop`) in every sample but the
    /// ones in `elsewhere`, which stand in another app function (0x9000).
    static func stack(site: UInt64, samples: Int = 5, elsewhere: Set<Int> = [], interval: Double = 0.1) -> HangStack {
        var frames: [HangStack.Frame] = [
            HangStack.Frame(image: 1, offset: 0x1_2340),  // 0: a system function (the leaf)
            HangStack.Frame(image: 0, offset: site),      // 1: the site
            HangStack.Frame(image: 0, offset: 0x9000),    // 2: another app function
            HangStack.Frame(image: 0, offset: 0x4000),    // 3: the app's caller
            HangStack.Frame(image: 1, offset: 0x2_0000),  // 4: the system's run loop
        ]
        frames = frames.map { $0 }
        let list = (0..<samples).map { index in
            HangStack.Sample(at: Double(index) * interval, frames: elsewhere.contains(index) ? [0, 2, 3, 4] : [0, 1, 3, 4])
        }
        return HangStack(images: [appImage, systemImage], frames: frames, samples: list)
    }
}
