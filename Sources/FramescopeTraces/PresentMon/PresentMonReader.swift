import FramescopeCore

/// Reads a PresentMon CSV (1.x, 2.x, `--v1_metrics`, `--v2_metrics`, and the OCAT and
/// CapFrameX captures written in the same layout) as a stream.
///
/// ```
/// Application,ProcessID,SwapChainAddress,Runtime,SyncInterval,PresentFlags,AllowsTearing,PresentMode,Dropped,TimeInSeconds,MsBetweenPresents,MsBetweenDisplayChange,MsInPresentAPI,MsUntilRenderComplete,MsUntilDisplayed
/// FarCryNewDawn.exe,9208,0x00000259DAE0BCF0,DXGI,0,0,0,Composed: Copy with GPU GDI,0,10.907744,16.811,16.728,1.334,4.919,14.347
/// ```
///
/// Each row is one present of one application's swap chain. Each swap chain is a source
/// (``TraceEvent/source(_:)``); a present that reached the screen is a tick at the time it
/// was displayed: its start time plus `MsUntilDisplayed` (or the CPU's start plus
/// `DisplayLatency` in the 2.x `--v2_metrics` layout). A present that never reached it
/// (`Dropped` 1, or `NA` in the display column) makes no tick and is counted; the counts
/// follow as PresentMon's own figures. Times in performance-counter ticks are converted
/// with the counter's frequency, measured from the file itself (docs/traces.md).
struct PresentMonReader {
    let file: String

    /// The longest line accepted, in bytes (OCAT's first row carries the system's
    /// description: about 600 bytes).
    static let maximumLineBytes = 16 << 10
    /// The longest application name or swap-chain address kept, in bytes.
    static let maximumNameBytes = 256

    func read<Source: ByteSource>(
        from source: inout Source,
        progress: (Int) -> Void,
        note: (String) -> Void,
        _ handle: (TraceEvent, _ line: Int) throws(TraceError) -> Void
    ) throws(TraceError) {
        var state = PresentMonState(file: file)
        let lines = LineSplitter(file: file, maximumLineBytes: Self.maximumLineBytes, formatName: "a PresentMon CSV")
        try lines.forEachLineSlice(of: &source, progress: progress) { (line, number) throws(TraceError) in
            try state.take(line, number, handle)
        }
        try state.finish(note: note, handle)
    }

    /// Whether `prefix` (the first bytes of a file) looks like a PresentMon CSV: a first
    /// line, after a byte-order mark and any `//key=value` lines (CapFrameX's description
    /// of the capture), that starts with `Application,` and names `ProcessID` or
    /// `SwapChainAddress`.
    static func matches(prefix: some Collection<UInt8>) -> Bool {
        var bytes = Array(prefix.prefix(4096))[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        for _ in 0...PresentMonState.maximumMetadataLines {
            let end = bytes.firstIndex(of: UInt8(ascii: "\n")) ?? bytes.endIndex
            let line = String(decoding: bytes[..<end], as: UTF8.self).lowercased()
            if line.hasPrefix("//"), end < bytes.endIndex {
                bytes = bytes[(end + 1)...]
                continue
            }
            return line.hasPrefix("application,") && (line.contains(",processid") || line.contains(",swapchainaddress"))
        }
        return false
    }
}
