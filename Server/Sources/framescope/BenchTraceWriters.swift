import Foundation
import FramescopeTraces

/// A file written in 1 MiB pieces, for the generated benchmark recordings.
struct BenchFileWriter {
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    /// Bytes written so far, the buffer included.
    private(set) var written = 0

    init(path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else {
            throw CLIFailure(exitCode: CLIFailure.ioError, message: "\(path): cannot create the benchmark recording")
        }
        self.handle = handle
        buffer.reserveCapacity(1 << 21)
    }

    mutating func append(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        written += text.utf8.count
    }

    mutating func flushIfFull() throws {
        if buffer.count >= 1 << 20 { try flush() }
    }

    mutating func flush() throws {
        try handle.write(contentsOf: buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    mutating func close() throws {
        try flush()
        try handle.close()
    }
}

/// Generated recordings of other tools, of about a given size, shaped as the tools write
/// them (the corpus files' layouts), for `framescope bench formats`.
enum BenchRecordings {
    /// The formats generated, with the reader that reads them.
    static let formats: [TraceFormat] = [.csv, .surfaceFlingerLatency, .presentMon, .chrome, .xctrace]

    /// Writes a recording of `format` of at least `bytes` bytes at `path`; returns its size.
    static func write(_ format: TraceFormat, bytes: Int, to path: String) throws -> Int {
        var file = try BenchFileWriter(path: path)
        switch format {
        case .csv:
            try file.close()
            return try writeBenchmarkTrace(ticks: max(2, bytes / 33), to: path)
        case .surfaceFlingerLatency:
            file.append("16666667\n")
            var vsync: Int64 = 96_070_354_631_117
            var index = 0
            while file.written < bytes {
                vsync += index % 97 == 96 ? 33_333_334 : 16_666_667
                file.append("\(vsync)\t\(vsync + 17_816_355)\t\(vsync)\n")
                index += 1
                try file.flushIfFull()
            }
        case .presentMon:
            // PresentMon 2.x's default columns, two swap chains (the game and dwm.exe).
            file.append("Application,ProcessID,SwapChainAddress,PresentRuntime,SyncInterval,PresentFlags,AllowsTearing,PresentMode,FrameType,TimeInQPC,MsBetweenSimulationStart,MsBetweenPresents,MsBetweenDisplayChange,MsInPresentAPI,MsRenderPresentLatency,MsUntilDisplayed,MsPCLatency,CPUStartQPC,MsBetweenAppStart,MsCPUBusy,MsCPUWait,MsGPULatency,MsGPUTime,MsGPUBusy,MsGPUWait,MsVideoBusy,MsAnimationError,AnimationTime,MsFlipDelay,MsAllInputToPhotonLatency,MsClickToPhotonLatency,MsInstrumentedLatency\n")
            var qpc: Int64 = 8_086_531_034
            var index = 0
            while file.written < bytes {
                let game = index % 4 != 3
                qpc += game ? 166_667 : 55_555
                let displayed = index % 97 == 96 ? "NA" : "16.2531"
                file.append(game
                    ? "Game.exe,4242,0x296989CD999,DXGI,1,0,0,Hardware: Independent Flip,Application,\(qpc),NA,16.72210000000000,16.62600000000000,0.15220000000000,0.17940000000000,\(displayed),NA,\(qpc - 166_329),16.7851,16.6329,0.1522,2.5541,14.2582,0.3531,13.9051,0.0000,NA,421.9730,NA,NA,NA,NA\n"
                    : "dwm.exe,1300,0x296989CD030,DXGI,1,0,0,Hardware: Legacy Flip,Application,\(qpc),NA,16.72210000000000,16.62600000000000,0.15220000000000,0.17940000000000,16.2531,NA,\(qpc - 166_329),16.7851,16.6329,0.1522,2.5541,14.2582,0.3531,13.9051,0.0000,NA,421.9730,NA,NA,NA,NA\n")
                index += 1
                try file.flushIfFull()
            }
        case .chrome:
            // What a DevTools trace holds: per vsync a BeginFrame, a PipelineReporter slice
            // and its end, and some twenty events of other kinds that the reader skips.
            file.append(#"{"traceEvents":[{"name":"process_name","ph":"M","pid":88357,"tid":1,"ts":0,"args":{"name":"Renderer"}}"#)
            var ts: Int64 = 1_000_000
            var index = 0
            while file.written < bytes {
                ts += 16_667
                let state = index % 97 == 96 ? "STATE_DROPPED" : "STATE_PRESENTED_ALL"
                file.append(#",{"args":{"frameSeqId":\#(index)},"cat":"disabled-by-default-devtools.timeline.frame","name":"BeginFrame","ph":"I","pid":88357,"s":"t","tid":14,"ts":\#(ts)}"#)
                file.append(#",{"args":{"chrome_frame_reporter":{"state":"\#(state)","frame_source":1,"frame_sequence":\#(index),"affects_smoothness":true,"scroll_state":"SCROLL_COMPOSITOR_THREAD"}},"cat":"cc,benchmark","id2":{"local":"0x\#(String(index, radix: 16))"},"name":"PipelineReporter","ph":"b","pid":88357,"scope":"PipelineReporter","tid":14,"ts":\#(ts)}"#)
                for other in 0..<20 {
                    file.append(#",{"args":{"src_file":"../../third_party/blink/renderer/core/scheduler/main_thread_scheduler_impl.cc","src_func":"PostTask"},"cat":"toplevel","dur":\#(other * 7 + 3),"name":"ThreadControllerImpl::RunTask","ph":"X","pid":88357,"tdur":\#(other * 5 + 2),"tid":\#(other % 3 + 1),"ts":\#(ts + Int64(other) * 500),"tts":\#(ts / 2)}"#)
                }
                file.append(#",{"args":{},"cat":"cc,benchmark","id2":{"local":"0x\#(String(index, radix: 16))"},"name":"PipelineReporter","ph":"e","pid":88357,"scope":"PipelineReporter","tid":14,"ts":\#(ts + 15_000)}"#)
                index += 1
                try file.flushIfFull()
            }
            file.append("]}\n")
        case .xctrace:
            // Instruments' display-vsyncs-interval table, ids and refs as xctrace writes them.
            file.append(#"<?xml version="1.0"?>\#n<trace-query-result>\#n<node xpath='//trace-toc[1]/run[1]/data[1]/table[55]'><schema name="display-vsyncs-interval" documentation="Marks display vsyncs"><col><mnemonic>timestamp</mnemonic><name>Timestamp</name><engineering-type>start-time</engineering-type></col><col><mnemonic>duration</mnemonic><name>Duration</name><engineering-type>duration</engineering-type></col><col><mnemonic>display-name</mnemonic><name>Display Name</name><engineering-type>display-name</engineering-type></col><col><mnemonic>color</mnemonic><name>Color</name><engineering-type>render-buffer-depth</engineering-type></col><col><mnemonic>event-label</mnemonic><name>Label</name><engineering-type>narrative</engineering-type></col><col><mnemonic>event</mnemonic><name>Event</name><engineering-type>vsync-event</engineering-type></col></schema>\#n"#)
            file.append(#"<row><start-time id="1" fmt="00:00.481.099">481099833</start-time><duration id="2" fmt="1 ns">1</duration><display-name id="3" fmt="Display 1">Display 1</display-name><render-buffer-depth id="4" fmt="2">2</render-buffer-depth><narrative id="5" fmt="VSync Request 00:00.481.099"><narrative-text id="6" fmt="VSync Request ">VSync Request </narrative-text><start-time ref="1"/></narrative><vsync-event id="7" fmt="VSYNC">VSYNC</vsync-event></row>\#n"#)
            var time: Int64 = 481_099_833
            var id = 8
            var index = 0
            while file.written < bytes {
                time += index % 97 == 96 ? 33_333_334 : 16_666_667
                file.append(#"<row><start-time id="\#(id)" fmt="00:00.\#(time / 1000)">\#(time)</start-time><duration ref="2"/><display-name ref="3"/><render-buffer-depth ref="4"/><narrative id="\#(id + 1)" fmt="VSync Request 00:00.\#(time / 1000)"><narrative-text ref="6"/><start-time ref="\#(id)"/></narrative><vsync-event ref="7"/></row>\#n"#)
                id += 2
                index += 1
                try file.flushIfFull()
            }
            file.append("</node>\n</trace-query-result>\n")
        default:
            throw CLIFailure(exitCode: 64, message: "no generator for \(format.rawValue)")
        }
        try file.close()
        return file.written
    }
}
