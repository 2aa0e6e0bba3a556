import FramescopeCore
import FramescopeScroll

/// The ten variants the thesis measured, as simulations of its test: a 500-message list
/// on a slow 60 Hz device, scrolled by a timer.
///
/// The simulation models the mechanism, not the result. It generates the message list
/// (``MessageDataset``) and lays out the rows. It runs the scroll script: a timer every
/// 0.4 s animates the content offset down by 100 pt, then 30 pt more on each fire, over
/// five passes to the bottom, jumping back to the top in between. The timer runs on the
/// main thread, so a busy main thread delays it. Every row that scrolls into view costs
/// main-thread time, and every visible row costs render time. Each optimisation of the
/// thesis removes or moves a cost (``RowCosts``). The resulting tick stream goes through
/// the ``PipelineSimulator``, and the table emerges from `framescope analyze`. It is a
/// simulation calibrated to the thesis' figures, not a measurement of a device.
public struct ThesisScenario: Sendable, Hashable {
    /// The scenario's name on the command line (`worst-case`).
    public var name: String
    /// The thesis' row ("0.2 no optimisation").
    public var thesisRow: String
    /// What the variant changes, in a few words.
    public var summary: String
    /// The thesis' average FPS.
    public var thesisAverageFPS: Double
    /// The thesis' frame-rate stability, as a fraction (0.236 for 23.6 %).
    public var thesisStability: Double
    /// The thesis' test duration, in seconds.
    public var thesisDuration: Double
    /// The per-row costs of this variant.
    public var costs: RowCosts
    /// What the list shows.
    public var content: Content

    /// What the rows of the list are.
    public enum Content: Sendable, Hashable {
        /// One plain system cell per message, 44 pt, media replaced by a line of text.
        case plainText
        /// The chat bubbles: text bubbles, and rows of one 180 pt image or two or three 90 pt
        /// images (188 pt and 98 pt with their margins).
        case messages
        /// Text nodes sized to their text, media replaced by a line of text (AsyncDisplayKit).
        case asyncText
    }

    /// The time one row costs, in seconds, on the thesis' device (an 800 MHz A5).
    public struct RowCosts: Sendable, Hashable {
        /// Main-thread time of a frame while the list moves.
        public var mainPerFrame: Double
        /// Main-thread time of a frame while it rests.
        public var mainPerIdleFrame: Double
        /// Main-thread time to get a cell for a text row that scrolls into view.
        public var textCell: Double
        /// Main-thread time to get a cell for a media row that scrolls into view.
        public var mediaCell: Double
        /// Extra main-thread time per image item of a media row that scrolls into view.
        public var perImage: Double
        /// Extra main-thread time per static image of a media row that scrolls into view
        /// while images are shown at full size: decoding the full-size bitmap and handing it
        /// to Core Animation. The calibrated chain sets it to zero from `resized-images` on,
        /// where images are redrawn at screen size.
        public var perFullSizeImage: Double = 0
        /// Main-thread time to work out a text row's height when it scrolls into view.
        public var textHeight: Double
        /// Main-thread time to work out a media row's height when it scrolls into view: an
        /// Auto Layout pass while cells size themselves, nothing once `heightForRowAt`
        /// returns the media layout's fixed height (the thesis' variant 3).
        public var mediaHeight: Double = 0
        /// Whether heights are cached, so each row's height is worked out once.
        public var cachesHeights: Bool
        /// Main-thread time to look up a cached height (and keep the cache) when a row scrolls into view.
        public var cachedHeight: Double = 0
        /// Main-thread time to scale a static image the first time it is shown (cached by name).
        public var imageResize: Double
        /// Main-thread time per frame per visible animated image.
        public var mainPerVisibleGIF: Double
        /// Render time of a frame.
        public var renderPerFrame: Double
        /// Render time per visible text bubble per frame (an offscreen pass for rounded corners).
        public var renderPerVisibleBubble: Double
        /// Render time per visible static image per frame (scaling on the GPU).
        public var renderPerVisibleImage: Double
        /// Render time per visible animated image per frame.
        public var renderPerVisibleGIF: Double
        /// Render time per row that scrolls into view (rasterizing it).
        public var renderPerNewRow: Double
    }

    /// The ten scenarios, in the thesis' order.
    public static let all: [ThesisScenario] = ThesisCalibration.scenarios()

    /// The scenario called `name`, or `nil`.
    public static func named(_ name: String) -> ThesisScenario? {
        all.first { $0.name == name }
    }

    /// The workload of this scenario.
    public func workload(seed: UInt64 = 1) -> ThesisWorkload {
        ThesisWorkload(scenario: self, seed: seed)
    }

    /// Simulates the scenario on a 60 Hz display.
    public func simulate(seed: UInt64 = 1) -> SimulatedRecording {
        run(seed: seed).recording
    }

    /// Simulates the scenario on a 60 Hz display and says how long its test took, in
    /// seconds (`nil` if the five passes did not finish).
    public func run(seed: UInt64 = 1) -> (recording: SimulatedRecording, testDuration: Double?) {
        var workload = workload(seed: seed)
        let recording = PipelineSimulator(display: .fixed(hz: 60), timestampJitter: 0.02, seed: seed).run(&workload)
        return (recording, workload.testDuration)
    }
}

/// The thesis' scroll test over a generated message list, frame by frame.
public struct ThesisWorkload: Workload, Sendable {
    struct Row: Sendable {
        var height: Double
        var isMedia: Bool
        var images: [Int]  // indices into MessageDataset.imagePool
        var gifs: Int
    }

    /// Height of the visible part of the list, in points (a 568 pt screen under a 64 pt bar).
    public static let viewportHeight = 504.0
    /// The scroll script: the thesis' accelerating timer (``AcceleratingScroll/thesis``), the
    /// same type a device's scroll test runs.
    public static let script = AcceleratingScroll.thesis

    let costs: ThesisScenario.RowCosts
    let rows: [Row]
    let tops: [Double]
    let maximumOffset: Double
    private var random: SeededGenerator
    private var player: ScrollPlayer

    private var visible = 0..<0
    private var started = false
    private var heightKnown: [Bool]
    private var imageResized: [Bool]

    /// The time the last pass reached the bottom, in seconds since the start; `nil` before.
    public var testDuration: Double? { player.finishedAfter }

    /// The list as the script sees it: the laid-out rows' height in the 504-point viewport.
    public var geometry: ScrollGeometry { player.geometry }

    init(scenario: ThesisScenario, seed: UInt64) {
        costs = scenario.costs
        random = SeededGenerator(seed: seed).fork(0x7E57)
        let messages = MessageDataset.generate(count: 500, seed: seed)
        var rows: [Row] = []
        for message in messages {
            let textLines = message.message.map { $0.split(separator: "\n").count } ?? 1
            switch scenario.content {
            case .plainText:
                rows.append(Row(height: 44, isMedia: false, images: [], gifs: 0))
            case .asyncText:
                rows.append(Row(height: message.mediaItems == nil ? 14 + 14 * Double(textLines) : 28, isMedia: false, images: [], gifs: 0))
            case .messages:
                if let items = message.mediaItems {
                    let indices = items.compactMap { MessageDataset.imagePool.firstIndex(of: $0) }
                    let gifs = items.filter(Message.isAnimated).count
                    rows.append(Row(height: items.count == 1 ? 188 : 98, isMedia: true, images: indices, gifs: gifs))
                } else {
                    rows.append(Row(height: 12 + 12 * Double(textLines), isMedia: false, images: [], gifs: 0))
                }
            }
        }
        self.rows = rows
        var tops: [Double] = []
        var y = 0.0
        for row in rows { tops.append(y); y += row.height }
        self.tops = tops
        maximumOffset = max(0, y - Self.viewportHeight)
        player = ScrollPlayer(script: .accelerating(Self.script), geometry: ScrollGeometry(contentHeight: y, viewportHeight: Self.viewportHeight))
        heightKnown = Array(repeating: false, count: rows.count)
        imageResized = Array(repeating: false, count: MessageDataset.imagePool.count)
    }

    /// Rows overlapping [offset, offset + viewport).
    func visibleRows(at offset: Double) -> Range<Int> {
        let first = max(0, tops.partitioningIndex { $0 > offset } - 1)
        let last = tops.partitioningIndex { $0 >= offset + Self.viewportHeight }
        return first..<last
    }

    /// Fires the scroll timer if it is due, moves the animated offset (both by the script's
    /// ``ScrollPlayer``), and prices the rows that scroll into view (main thread) and the rows
    /// on screen (render).
    public mutating func frame(startingAt time: Double, refreshInterval: Double) -> FrameWork {
        if !started {
            started = true
            visible = visibleRows(at: 0)
        }
        var main = 0.0
        let scroll = player.frame(at: time)
        let offset = scroll.offset
        let moving = scroll.isMoving

        let now = visibleRows(at: offset)
        var entering = 0
        for index in now where !visible.contains(index) {
            main += cellCost(index)
            entering += 1
        }
        visible = now

        var bubbles = 0
        var images = 0
        var gifs = 0
        for index in now {
            let row = rows[index]
            if row.isMedia { images += row.images.count - row.gifs; gifs += row.gifs } else { bubbles += 1 }
        }
        main += moving ? costs.mainPerFrame : costs.mainPerIdleFrame
        main += Double(gifs) * costs.mainPerVisibleGIF
        var render = costs.renderPerFrame + Double(entering) * costs.renderPerNewRow
        render += Double(bubbles) * costs.renderPerVisibleBubble
        render += Double(images) * costs.renderPerVisibleImage
        render += Double(gifs) * costs.renderPerVisibleGIF
        // Each cost varies a little from frame to frame, as on a real device.
        main *= random.logNormal(median: 1, sigma: 0.08)
        render *= random.logNormal(median: 1, sigma: 0.08)
        return FrameWork(main: main, render: render, segment: moving ? "pass \(scroll.pass) scroll \(scroll.moves)" : nil)
    }

    private mutating func cellCost(_ index: Int) -> Double {
        let row = rows[index]
        var cost = row.isMedia ? costs.mediaCell + Double(row.images.count) * costs.perImage : costs.textCell
        if costs.cachesHeights && heightKnown[index] {
            cost += costs.cachedHeight
        } else {
            cost += row.isMedia ? costs.mediaHeight : costs.textHeight
            heightKnown[index] = true
        }
        for image in row.images where !Message.isAnimated(MessageDataset.imagePool[image]) {
            cost += costs.perFullSizeImage
            if costs.imageResize > 0 && !imageResized[image] {
                cost += costs.imageResize
                imageResized[image] = true
            }
        }
        return cost
    }

    /// Whether the fifth pass has reached the bottom.
    public func isFinished(at time: Double) -> Bool { player.isFinished }
}
