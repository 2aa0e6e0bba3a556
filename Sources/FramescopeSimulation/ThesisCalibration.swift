import FramescopeCore

/// The cost of each variant of the thesis, built as the thesis built its variants: each
/// starts from the one before and changes only what its optimisation changes.
///
/// ``Parameters`` holds the figures the chain is made from, in milliseconds on the
/// thesis' device. ``calibrated`` holds the values the opt-in calibration search found
/// (`ThesisCalibrationSearch`). The search and the scenarios build the chain with the
/// same function, ``costs(_:)``.
enum ThesisCalibration {
    /// The figures the variant chain is made from, in milliseconds.
    struct Parameters: Sendable, Hashable {
        /// 0.2: creating a text cell with its constraints (no reuse).
        var worstTextCell: Double
        /// 0.2: a media cell's extra over a text cell.
        var worstMediaExtra: Double
        /// 0.2: a self-sizing height (an Auto Layout pass per row, text or media).
        var worstHeight: Double
        /// 0.2: GPU scaling of one visible full-size image, per frame.
        var worstRenderPerImage: Double
        /// Offscreen pass of one visible rounded bubble, per frame (until 6.2).
        var renderPerBubble: Double
        /// 1: a dequeued text cell re-laid-out for its type and direction.
        var reuseTextCell: Double
        /// 1: a media cell's extra.
        var reuseMediaExtra: Double
        /// 2: a text cell of a fixed layout class.
        var staticTextCell: Double
        /// 2: a media cell's extra.
        var staticMediaExtra: Double
        /// 3: measuring a text row's text for `heightForRowAt` (media rows have fixed heights).
        var manualHeight: Double
        /// 5: redrawing one image at screen size, once per image.
        var imageResize: Double
        /// 6.1: extra rasterization of a new cell.
        var rasterizeNewRow: Double
        /// 6.1: re-rasterizing an animated image's cell, per visible animated image per frame.
        var rasterizePerGIF: Double
        /// 6.2: a bubble drawn by the CPU, per visible bubble per frame (no offscreen pass).
        var drawnBubble: Double
        /// 6.2: share of a cell's set-up saved by one drawing view instead of a masked layer stack.
        var drawnBubbleSaving: Double
        /// AsyncDisplayKit: setting up a text node on the main thread.
        var asyncTextNode: Double
        /// Main-thread time of a frame while the list moves.
        var mainPerFrame: Double
        /// Render time of a frame.
        var renderPerFrame: Double
        /// Main-thread time per image item of a new media cell.
        var perImage: Double
        /// Main-thread time per visible animated image per frame.
        var mainPerGIF: Double
        /// First offscreen render of a new cell's bubble (until 6.2).
        var renderPerNewRow: Double
        /// 4: looking up a cached height and keeping the cache, per row scrolling into view.
        var heightCacheLookup: Double
        /// Until 5: decoding a full-size static image and handing it to Core Animation, per
        /// static (not animated) image of a media row scrolling into view.
        var fullSizeImage: Double
    }

    /// The values found by the calibration search (seed 1). With them, all ten scenarios
    /// land within ±5 % FPS and ±5 points of stability of the thesis (docs/simulation.md).
    static let calibrated = Parameters(
        worstTextCell: 17.567, worstMediaExtra: 15.718, worstHeight: 5.053, worstRenderPerImage: 0.91, renderPerBubble: 0.871,
        reuseTextCell: 11.607, reuseMediaExtra: 1.848, staticTextCell: 9.1, staticMediaExtra: 1.695, manualHeight: 4.442,
        imageResize: 18.209, rasterizeNewRow: 5.106, rasterizePerGIF: 0.469, drawnBubble: 0.6, drawnBubbleSaving: 0.154,
        asyncTextNode: 4.9, mainPerFrame: 1.345, renderPerFrame: 1.962, perImage: 0.771, mainPerGIF: 0.915, renderPerNewRow: 2.609,
        heightCacheLookup: 0.016, fullSizeImage: 2.818
    )

    /// Every variant's costs, by scenario name, built from `p`.
    static func costs(_ p: Parameters) -> [String: ThesisScenario.RowCosts] {
        let ms = 0.001
        // 0.2: a new cell for every row, constraints built in code, self-sizing heights,
        // full-size images decoded on the main thread and scaled by the GPU, rounded
        // bubbles rendered offscreen.
        var worst = ThesisScenario.RowCosts(
            mainPerFrame: p.mainPerFrame * ms, mainPerIdleFrame: 1.0 * ms,
            textCell: p.worstTextCell * ms, mediaCell: (p.worstTextCell + p.worstMediaExtra) * ms, perImage: p.perImage * ms,
            textHeight: p.worstHeight * ms, cachesHeights: false, imageResize: 0, mainPerVisibleGIF: p.mainPerGIF * ms,
            renderPerFrame: p.renderPerFrame * ms, renderPerVisibleBubble: p.renderPerBubble * ms,
            renderPerVisibleImage: p.worstRenderPerImage * ms, renderPerVisibleGIF: 1.2 * ms, renderPerNewRow: p.renderPerNewRow * ms
        )
        worst.mediaHeight = p.worstHeight * ms
        worst.perFullSizeImage = p.fullSizeImage * ms
        var reuse = worst  // 1: cells dequeued, but re-laid-out for their type and direction
        reuse.textCell = p.reuseTextCell * ms
        reuse.mediaCell = (p.reuseTextCell + p.reuseMediaExtra) * ms
        var staticLayouts = reuse  // 2: one class per layout, no re-layout on reuse
        staticLayouts.textCell = p.staticTextCell * ms
        staticLayouts.mediaCell = (p.staticTextCell + p.staticMediaExtra) * ms
        var manualHeights = staticLayouts  // 3: heightForRowAt measures the text
        manualHeights.textHeight = p.manualHeight * ms  // text rows measure their text
        manualHeights.mediaHeight = 0  // media rows return their layout's fixed height
        var cachedHeights = manualHeights  // 4: each row's height measured once
        cachedHeights.cachesHeights = true
        cachedHeights.cachedHeight = p.heightCacheLookup * ms
        var resizedImages = cachedHeights  // 5: images redrawn at screen size once; no GPU scaling
        resizedImages.imageResize = p.imageResize * ms
        resizedImages.perFullSizeImage = 0
        resizedImages.renderPerVisibleImage = 0.3 * ms
        var rasterized = resizedImages  // 6.1: new cells rasterized; animated images defeat the cache
        rasterized.renderPerNewRow = (p.renderPerNewRow + p.rasterizeNewRow) * ms
        rasterized.renderPerVisibleGIF = p.rasterizePerGIF * ms
        var noOffscreen = resizedImages  // 6.2: bubbles drawn by one view, no offscreen pass
        noOffscreen.renderPerVisibleBubble = p.drawnBubble * ms
        noOffscreen.renderPerNewRow = 0
        noOffscreen.textCell = staticLayouts.textCell * max(0.1, 1 - p.drawnBubbleSaving)
        noOffscreen.mediaCell = staticLayouts.mediaCell * max(0.1, 1 - p.drawnBubbleSaving)
        var asyncDisplayKit = plain  // text nodes laid out and drawn in the background
        asyncDisplayKit.textCell = p.asyncTextNode * ms
        asyncDisplayKit.mainPerFrame = 2.5 * ms
        return [
            "best-case": plain, "worst-case": worst, "reuse-cells": reuse, "static-layouts": staticLayouts,
            "manual-heights": manualHeights, "cached-heights": cachedHeights, "resized-images": resizedImages,
            "rasterized-layers": rasterized, "no-offscreen-rendering": noOffscreen, "asyncdisplaykit": asyncDisplayKit,
        ]
    }

    /// 0.1: plain system cells with one line of text.
    static let plain = ThesisScenario.RowCosts(
        mainPerFrame: 1.5 * 0.001, mainPerIdleFrame: 1.0 * 0.001,
        textCell: 2.5 * 0.001, mediaCell: 2.5 * 0.001, perImage: 0,
        textHeight: 0, cachesHeights: false, imageResize: 0, mainPerVisibleGIF: 0,
        renderPerFrame: 3 * 0.001, renderPerVisibleBubble: 0.2 * 0.001, renderPerVisibleImage: 0,
        renderPerVisibleGIF: 0, renderPerNewRow: 0
    )

    /// The ten scenarios with the thesis' figures, costs from `parameters`.
    static func scenarios(_ parameters: Parameters = calibrated) -> [ThesisScenario] {
        let costs = costs(parameters)
        func scenario(_ name: String, _ row: String, _ summary: String, _ fps: Double, _ stability: Double, _ duration: Double, _ content: ThesisScenario.Content) -> ThesisScenario {
            ThesisScenario(name: name, thesisRow: row, summary: summary, thesisAverageFPS: fps, thesisStability: stability,
                           thesisDuration: duration, costs: costs[name]!, content: content)
        }
        return [
            scenario("best-case", "0.1 plain text cells", "system cells, one line of text each", 60.0, 1.0, 66.5, .plainText),
            scenario("worst-case", "0.2 no optimisation", "new cells, Auto Layout, self-sizing, offscreen bubbles", 26.0, 0.236, 105.5, .messages),
            scenario("reuse-cells", "1", "cells dequeued and reconfigured", 34.9, 0.26, 92.7, .messages),
            scenario("static-layouts", "2", "one cell class per layout", 40.6, 0.324, 90.3, .messages),
            scenario("manual-heights", "3", "heights measured in heightForRowAt", 44.8, 0.399, 89.0, .messages),
            scenario("cached-heights", "4", "heights cached per row", 48.7, 0.4685, 87.6, .messages),
            scenario("resized-images", "5", "images redrawn at screen size once", 50.3, 0.7735, 87.6, .messages),
            scenario("rasterized-layers", "6.1 (a regression)", "cells rasterized; animated images defeat the cache", 47.5, 0.4765, 87.4, .messages),
            scenario("no-offscreen-rendering", "6.2, the optimised end result", "bubbles drawn by one view, no offscreen pass", 53.4, 0.871, 87.4, .messages),
            scenario("asyncdisplaykit", "AsyncDisplayKit", "text nodes laid out and drawn off the main thread", 58.5, 0.975, 80.3, .asyncText),
        ]
    }
}
