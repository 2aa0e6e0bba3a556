import FramescopeCore

/// The visits' way out, as one part of the SDK (``SDKPart``): the ``VisitPipeline`` that
/// finishes each closed visit and the uploader of their batches (``DeliveryQueue``).
///
/// They are one part because the pipeline is the queue's only writer: a flush drains the
/// pipeline into the queue and then flushes the queue (flushing the queue beside the
/// pipeline would seal a batch without the visit just closed), and a stop drains the
/// pipeline before the uploader stops.
@MainActor
final class VisitDelivery: SDKPart {
    /// The visits' disk queue and uploader.
    let queue: DeliveryQueue
    /// The pipeline's settings; its task starts with ``start()``.
    private var pipeline: VisitPipeline
    private let continuation: AsyncStream<PipelineMessage>.Continuation
    private let messages: AsyncStream<PipelineMessage>
    private var pipelineTask: Task<Void, Never>?
    private var uploadTask: Task<Void, Never>?

    /// A part sending the visits `pipeline` finishes through `pipeline.delivery`.
    init(pipeline: VisitPipeline) {
        queue = pipeline.delivery
        self.pipeline = pipeline
        (messages, continuation) = AsyncStream.makeStream(of: PipelineMessage.self)
    }

    /// Called with each finished visit once it is in the disk queue; set before ``start()``.
    var onVisit: @Sendable (ScreenVisitEvent) async -> Void {
        get { pipeline.notify }
        set { pipeline.notify = newValue }
    }

    /// Hands the pipeline a visit that closed (nil: none was open) and whether another began.
    /// Before ``start()`` the message waits in the stream; after ``stop()`` it is dropped.
    func visitChanged(closed: VisitOutcome?, started: Bool) {
        continuation.yield(.visitChanged(closed: closed, started: started))
    }

    /// Starts the uploader's loop, then the pipeline's.
    func start() {
        let queue = queue
        uploadTask = Task.detached { await queue.run() }
        let pipeline = pipeline
        let messages = messages
        pipelineTask = Task.detached { await pipeline.run(messages) }
    }

    /// Waits until the visits closed so far are in the queue, then flushes the queue
    /// (``Uploader/flush(timeout:)``).
    func flush(timeout: Double) async -> Bool {
        await withCheckedContinuation { done in
            continuation.yield(.flush(timeout: timeout, done: done))
        }
    }

    /// Drains the pipeline (every closed visit reaches the disk queue), then stops the
    /// uploader; what is not delivered stays queued for the next start.
    func stop() async {
        continuation.finish()
        await pipelineTask?.value
        await queue.stop()
        await uploadTask?.value
    }

    /// Adds the delivery's counters and the short visits kept for their hangs.
    func addStatistics(to statistics: inout Framescope.Statistics) async {
        statistics.shortVisitsKept = pipeline.shortVisitsKept.withLock { $0 }
        statistics.delivery = await queue.currentStatistics
    }
}
