/// The cost of each variant of the thesis, and the thesis' own figures to compare with.
///
/// Each variant starts from the one before it and changes only what its optimisation
/// changes, as the thesis built them. The costs are seconds on the thesis' device. They
/// were calibrated so that the simulated average FPS and stability land near the
/// thesis' table; docs/simulation.md shows both side by side.
enum ThesisCalibration {
    static let ms = 0.001

    /// 0.2: a new cell for every row, Auto Layout constraints built in code, self-sizing
    /// heights, full-size images scaled by the GPU, rounded bubbles drawn offscreen.
    static let worst = ThesisScenario.RowCosts(
        mainPerFrame: 2.0 * ms, mainPerIdleFrame: 1.0 * ms,
        textCell: 30 * ms, mediaCell: 36 * ms, perImage: 6 * ms,
        height: 12 * ms, cachesHeights: false, imageResize: 0, mainPerVisibleGIF: 0.8 * ms,
        renderPerFrame: 3 * ms, renderPerVisibleBubble: 0.9 * ms, renderPerVisibleImage: 1.6 * ms,
        renderPerVisibleGIF: 1.2 * ms, renderPerNewRow: 0
    )

    static var reuse: ThesisScenario.RowCosts {
        var costs = worst
        costs.textCell = 18 * ms  // dequeued, but re-laid-out for its type and direction
        costs.mediaCell = 24 * ms
        return costs
    }

    static var staticLayouts: ThesisScenario.RowCosts {
        var costs = reuse
        costs.textCell = 11 * ms  // eight fixed cell classes: no re-layout on reuse
        costs.mediaCell = 16 * ms
        return costs
    }

    static var manualHeights: ThesisScenario.RowCosts {
        var costs = staticLayouts
        costs.height = 5 * ms  // heightForRowAt measures the string
        return costs
    }

    static var cachedHeights: ThesisScenario.RowCosts {
        var costs = manualHeights
        costs.cachesHeights = true  // passes 2–5 skip the measurement
        return costs
    }

    static var resizedImages: ThesisScenario.RowCosts {
        var costs = cachedHeights
        costs.imageResize = 14 * ms  // redrawn once at screen size, then cached by name
        costs.renderPerVisibleImage = 0.3 * ms  // no GPU scaling any more
        return costs
    }

    static var rasterized: ThesisScenario.RowCosts {
        var costs = resizedImages
        costs.renderPerNewRow = 6 * ms  // each new cell is rasterized…
        costs.renderPerVisibleGIF = 7 * ms  // …and every frame of an animated image invalidates the bitmap
        return costs
    }

    static var noOffscreen: ThesisScenario.RowCosts {
        var costs = resizedImages
        costs.textCell += 2 * ms  // bubbles drawn on the CPU in draw(_:)
        costs.renderPerVisibleBubble = 0.15 * ms  // no offscreen pass
        return costs
    }

    static let plain = ThesisScenario.RowCosts(
        mainPerFrame: 1.5 * ms, mainPerIdleFrame: 1.0 * ms,
        textCell: 2.5 * ms, mediaCell: 2.5 * ms, perImage: 0,
        height: 0, cachesHeights: false, imageResize: 0, mainPerVisibleGIF: 0,
        renderPerFrame: 3 * ms, renderPerVisibleBubble: 0.2 * ms, renderPerVisibleImage: 0,
        renderPerVisibleGIF: 0, renderPerNewRow: 0
    )

    static var asyncDisplayKit: ThesisScenario.RowCosts {
        var costs = plain
        costs.textCell = 4 * ms  // node set-up on the main thread; text laid out and drawn in the background
        costs.mainPerFrame = 2.5 * ms
        return costs
    }

    static let scenarios: [ThesisScenario] = [
        ThesisScenario(name: "best-case", thesisRow: "0.1 plain text cells", summary: "system cells, one line of text each",
                       thesisAverageFPS: 60.0, thesisStability: 1.0, thesisDuration: 66.5, costs: plain, content: .plainText),
        ThesisScenario(name: "worst-case", thesisRow: "0.2 no optimisation", summary: "new cells, Auto Layout, self-sizing, offscreen bubbles",
                       thesisAverageFPS: 26.0, thesisStability: 0.236, thesisDuration: 105.5, costs: worst, content: .messages),
        ThesisScenario(name: "reuse-cells", thesisRow: "1", summary: "cells dequeued and reconfigured",
                       thesisAverageFPS: 34.9, thesisStability: 0.26, thesisDuration: 92.7, costs: reuse, content: .messages),
        ThesisScenario(name: "static-layouts", thesisRow: "2", summary: "one cell class per layout",
                       thesisAverageFPS: 40.6, thesisStability: 0.324, thesisDuration: 90.3, costs: staticLayouts, content: .messages),
        ThesisScenario(name: "manual-heights", thesisRow: "3", summary: "heights measured in heightForRowAt",
                       thesisAverageFPS: 44.8, thesisStability: 0.399, thesisDuration: 89.0, costs: manualHeights, content: .messages),
        ThesisScenario(name: "cached-heights", thesisRow: "4", summary: "heights cached per row",
                       thesisAverageFPS: 48.7, thesisStability: 0.4685, thesisDuration: 87.6, costs: cachedHeights, content: .messages),
        ThesisScenario(name: "resized-images", thesisRow: "5", summary: "images redrawn at screen size once",
                       thesisAverageFPS: 50.3, thesisStability: 0.7735, thesisDuration: 87.6, costs: resizedImages, content: .messages),
        ThesisScenario(name: "rasterized-layers", thesisRow: "6.1 (a regression)", summary: "cells rasterized; animated images defeat the cache",
                       thesisAverageFPS: 47.5, thesisStability: 0.4765, thesisDuration: 87.4, costs: rasterized, content: .messages),
        ThesisScenario(name: "no-offscreen-rendering", thesisRow: "6.2, the optimised end result", summary: "bubbles drawn on the CPU, no offscreen pass",
                       thesisAverageFPS: 53.4, thesisStability: 0.871, thesisDuration: 87.4, costs: noOffscreen, content: .messages),
        ThesisScenario(name: "asyncdisplaykit", thesisRow: "AsyncDisplayKit", summary: "text nodes laid out and drawn off the main thread",
                       thesisAverageFPS: 58.5, thesisStability: 0.975, thesisDuration: 80.3, costs: asyncDisplayKit, content: .asyncText),
    ]
}
