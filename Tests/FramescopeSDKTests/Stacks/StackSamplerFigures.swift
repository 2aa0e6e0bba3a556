#if os(Linux)
import CFramescopeStack
import FramescopeCore
import Foundation
import Glibc
import Testing
@testable import FramescopeSDK

/// Figures for docs/sdk.md, printed, never asserted on (timing belongs to benchmarks): the
/// time per sample and the bytes per hang. Off unless FRAMESCOPE_STACK_FIGURES=1.
///
///     FRAMESCOPE_STACK_FIGURES=1 swift test --skip-build --filter StackSamplerFigures
///
/// With the malloc counter of scripts/stack-sampler-mallocs preloaded, `allocations` also
/// counts the allocations on both threads while samples are taken, and that one asserts 0.
@Suite("Stack sampler figures", .serialized,
       .enabled(if: ProcessInfo.processInfo.environment["FRAMESCOPE_STACK_FIGURES"] != nil,
                "prints figures: FRAMESCOPE_STACK_FIGURES=1 swift test --filter StackSamplerFigures"))
struct StackSamplerFigures {
    typealias Threads = StackSamplerLinuxTests

    /// Times `count` samples of `thread` (request → copy done), in microseconds, sorted.
    static func time(_ thread: SampledThread, count: Int) -> [Double] {
        let table = ImageTable.loaded()
        var slot = [UInt64](repeating: 0, count: 128)
        var times: [Double] = []
        times.reserveCapacity(count)
        table.textRanges.withUnsafeBufferPointer { text in
            slot.withUnsafeMutableBufferPointer { slot in
                for _ in 0..<count {
                    let start = systemMonotonicNanoseconds()
                    let result = thread.sample(into: slot, text: text)
                    let end = systemMonotonicNanoseconds()
                    if case .success = result { times.append(Double(end - start) / 1e3) }
                }
            }
        }
        return times.sorted()
    }

    static func summary(_ times: [Double]) -> String {
        func at(_ q: Double) -> String { String(format: "%.1f", times[min(times.count - 1, Int(q * Double(times.count)))]) }
        let mean = times.reduce(0, +) / Double(max(times.count, 1))
        return "n=\(times.count) p50=\(at(0.5)) p90=\(at(0.9)) p99=\(at(0.99)) max=\(at(1)) mean=\(String(format: "%.1f", mean)) µs"
    }

    @Test("Time per sample: a thread blocked in read and a spinning one, 1,000 samples each")
    func timePerSample() throws {
        let reader = try Threads.BlockedReader()
        let blocked = Self.time(reader.thread, count: 1_000)
        reader.release()
        let spinner = try Threads.Spinner()
        let spinning = Self.time(spinner.thread, count: 1_000)
        spinner.release()
        print("FIGURE sample, blocked in read: \(Self.summary(blocked))")
        print("FIGURE sample, spinning:        \(Self.summary(spinning))")
        #expect(blocked.count == 1_000 && spinning.count == 1_000)

        var tables: [Double] = []
        for _ in 0..<50 {
            let start = systemMonotonicNanoseconds()
            _ = ImageTable.loaded()
            tables.append(Double(systemMonotonicNanoseconds() - start) / 1e3)
        }
        print("FIGURE ImageTable.loaded() (\(ImageTable.loaded().images.count) images): \(Self.summary(tables.sorted()))")
    }

    @Test("After each sample: the idle classifier (dladdr of the first frame); during a hang: rewriting its fatal-hang record")
    func perSampleWork() throws {
        let reader = try Threads.BlockedReader()
        defer { reader.release() }
        let table = ImageTable.loaded()
        var slot = [UInt64](repeating: 0, count: 128)
        let count = table.textRanges.withUnsafeBufferPointer { text in
            slot.withUnsafeMutableBufferPointer { (try? reader.thread.sample(into: $0, text: text).get()) ?? 0 }
        }
        let sample = slot.prefix(count)
        var idle: [Double] = []
        for _ in 0..<1_000 {
            let start = systemMonotonicNanoseconds()
            _ = IdleClassifier.loader.isIdle(sample, images: table)
            idle.append(Double(systemMonotonicNanoseconds() - start) / 1e3)
        }
        print("FIGURE idle classification of one sample (\(count) frames): \(Self.summary(idle.sorted()))")

        // The record of a 20-sample hang rewritten, as the watchdog's progress handler does.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("framescope-figures-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let recorder = FatalHangRecorder(directory: folder, app: AppInfo(id: "shop", version: "1.0", build: "1"), osVersion: "6",
                                         clock: .system, deviceState: { DeviceState() })
        recorder.scene.withLock { $0.screen = "Feed" }
        var buffer = StackSampleBuffer(capacity: 20, depth: 128)
        for index in 0..<20 { buffer.write(at: UInt64(index) * 100_000_000) { out in
            for (position, address) in sample.enumerated() { out[position] = address }
            return count
        } }
        let stack = buffer.hangStack(images: table, hangStart: 0).stack
        let start = MonotonicClock.system.now()
        recorder.handle(.began(Hang(start: start, duration: 0.25)))
        var writes: [Double] = []
        for index in 0..<200 {
            let begin = systemMonotonicNanoseconds()
            recorder.progressed(Hang(start: start, duration: 0.25 + Double(index) / 10, stack: stack))
            writes.append(Double(systemMonotonicNanoseconds() - begin) / 1e3)
        }
        let bytes = (try? Data(contentsOf: recorder.url).count) ?? 0
        recorder.handle(.ended(Hang(start: start, duration: 20), .recovered))
        print("FIGURE fatal-hang record rewrite (\(bytes) B, 20 samples): \(Self.summary(writes.sorted()))")
    }

    @Test("One sample of a thread blocked in read, frame by frame")
    func readStack() throws {
        let reader = try Threads.BlockedReader()
        defer { reader.release() }
        let table = ImageTable.loaded()
        var buffer = StackSampleBuffer(capacity: 1, depth: 128)
        table.textRanges.withUnsafeBufferPointer { text in
            _ = buffer.write(at: 0) { slot in (try? reader.thread.sample(into: slot, text: text).get()) ?? 0 }
        }
        let (stack, dropped) = buffer.hangStack(images: table, hangStart: 0)
        for (depth, index) in (stack.samples.first?.frames ?? []).enumerated() {
            let frame = stack.frames[index]
            let image = stack.images[frame.image]
            print("FIGURE read frame \(depth): \(image.name)\(image.app ? " (app)" : "") +0x\(String(frame.offset, radix: 16)) [\(image.id.prefix(12))…]")
        }
        print("FIGURE read frames dropped: \(dropped); fs_test_block_in_read at file address 0x\(String(table.lookup(KnownFunction.blockInRead.address)?.offset ?? 0, radix: 16))")
    }

    @Test("Bytes per hang: 20 samples of a 40-deep spinning stack, as JSON and gzipped")
    func bytesPerHang() throws {
        let spin = Spin()
        let box = Locked<SampledThread?>(nil)
        let finished = DispatchSemaphore(value: 0)
        Thread {
            box.withLock { $0 = SampledThread.current() }
            _ = fsTestDeep(40, spin.pointer)
            finished.signal()
        }.start()
        spin.entered.wait()  // 40 frames down, about to spin
        let thread = try #require(box.withLock { $0 })
        let table = ImageTable.loaded()
        let sampler = StackSampler(configuration: .init(interval: 0.01, maximumSamples: 20)) { table }
        sampler.hangBegan(at: systemMonotonicNanoseconds(), source: .thread(thread), pingRuns: PingRunCounter())
        #expect(sampler.waitUntilFinished(timeout: 5))
        let start = systemMonotonicNanoseconds()
        let result = try #require(sampler.hangEnded())
        let (stack, dropped) = (result.stack, result.droppedFrames)
        let conversion = Double(systemMonotonicNanoseconds() - start) / 1e3
        sampler.stop()
        spin.stop.bump()
        finished.wait()

        let json = try JSONEncoder().encode(stack)
        let gzipped = try Gzip.compress(Array(json))
        let depths = stack.samples.map(\.frames.count)
        print("FIGURE hang: \(stack.samples.count) samples, depth \(depths.min() ?? 0)–\(depths.max() ?? 0), \(stack.frames.count) distinct frames, \(stack.images.count) images, \(dropped) dropped; JSON \(json.count) B, gzip \(gzipped.count) B; hangEnded (conversion) \(String(format: "%.0f", conversion)) µs")
        // The bound: 20 samples of 128 frames, every frame distinct, offsets in a 64 MiB image.
        let worst = HangStack(
            images: stack.images,
            frames: (0..<2_560).map { HangStack.Frame(image: $0 % stack.images.count, offset: 0x100_0000 + UInt64($0) * 4_099) },
            samples: (0..<20).map { sample in HangStack.Sample(at: 0.25 + Double(sample) * 0.1, frames: Array(sample * 128..<(sample + 1) * 128)) })
        let worstJSON = try JSONEncoder().encode(worst)
        print("FIGURE hang, bound (20 × 128 distinct frames): JSON \(worstJSON.count) B, gzip \(try Gzip.compress(Array(worstJSON)).count) B")
        print("FIGURE images: \(stack.images.map { "\($0.name)\($0.app ? " (app)" : "")" }.joined(separator: ", "))")
        #expect(stack.samples.count == 20)
    }

    @Test("Allocations while sampling: none on the sampler's thread, none in the sampled thread's handler")
    func allocations() throws {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "framescope_thread_mallocs") else {
            print("FIGURE allocations: not counted (run scripts/stack-sampler-mallocs)")
            return
        }
        let mallocs = unsafeBitCast(symbol, to: (@convention(c) () -> UInt64).self)
        // The counter counts: an array of 1,000 integers is one allocation at least.
        let probe = mallocs()
        let array = [Int](repeating: 7, count: 1_000)
        #expect(mallocs() > probe && array.count == 1_000)
        // The spinning thread counts its own allocations from before its first sample to after
        // its last: the spin allocates nothing, so any count is the handler's.
        let spin = Spin()
        let box = Locked<SampledThread?>(nil)
        let counted = Locked<UInt64>(.max)
        let finished = DispatchSemaphore(value: 0)
        Thread {
            box.withLock { $0 = SampledThread.current() }
            let before = mallocs()
            _ = fsTestSpin(spin.pointer)
            let after = mallocs()
            counted.withLock { $0 = after - before }
            finished.signal()
        }.start()
        spin.entered.wait()
        let spinner = try #require(box.withLock { $0 })
        let table = ImageTable.loaded()
        var slot = [UInt64](repeating: 0, count: 128)
        var successes = 0
        let samplerMallocs: UInt64 = table.textRanges.withUnsafeBufferPointer { text in
            slot.withUnsafeMutableBufferPointer { slot in
                let before = mallocs()
                for _ in 0..<1_000 {
                    if case .success = spinner.sample(into: slot, text: text) { successes += 1 }
                }
                return mallocs() - before
            }
        }
        spin.stop.bump()
        finished.wait()
        let handlerMallocs = counted.withLock { $0 }
        print("FIGURE allocations over 1,000 samples of a spinning thread: sampler thread \(samplerMallocs), sampled thread \(handlerMallocs)")
        #expect(successes == 1_000)
        #expect(samplerMallocs == 0)
        #expect(handlerMallocs == 0)
    }
}
#endif
