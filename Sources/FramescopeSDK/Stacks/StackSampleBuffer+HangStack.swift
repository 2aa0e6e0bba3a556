import FramescopeCore

extension StackSampleBuffer {
    /// The samples as the wire's ``HangStack``: each address becomes an (image, offset) frame
    /// through `table` (offset = address − the image's base), identical frames are stored once,
    /// and each sample's `at` is seconds from `hangStart` (ns, the sampler's clock).
    ///
    /// An address no image holds, or held by an image without a build id (which no
    /// symbolicator could name) or beyond ``HangStack/maximumImages`` distinct images or
    /// ``HangStack/maximumImageSize``, is left out and counted in `droppedFrames`. Image names
    /// are cut to ``HangStack/maximumImageNameLength`` bytes of UTF-8. Run it after sampling,
    /// never in the window: it allocates.
    ///
    /// - Complexity: O(n log m) for n addresses and m images.
    func hangStack(images table: ImageTable, hangStart: UInt64) -> (stack: HangStack, droppedFrames: Int) {
        var images: [HangStack.Image] = []
        var imageIndex: [Int: Int] = [:]  // table index → stack index
        var frames: [HangStack.Frame] = []
        var frameIndex: [HangStack.Frame: Int] = [:]
        var samples: [HangStack.Sample] = []
        var dropped = 0
        for sample in 0..<Swift.min(count, HangStack.maximumSamples) {
            var indices: [Int] = []
            for address in addresses(ofSample: sample).prefix(HangStack.maximumDepth) {
                guard let (tableIndex, offset) = table.lookup(address) else {
                    dropped += 1
                    continue
                }
                let stackImage: Int
                if let known = imageIndex[tableIndex] {
                    stackImage = known
                } else {
                    let image = table.images[tableIndex]
                    guard Self.isSendable(image), images.count < HangStack.maximumImages else {
                        dropped += 1
                        continue
                    }
                    stackImage = images.count
                    imageIndex[tableIndex] = stackImage
                    images.append(HangStack.Image(id: image.id, name: Self.wireName(image.name), size: image.size,
                                                  app: image.isApp))
                }
                let frame = HangStack.Frame(image: stackImage, offset: offset)
                if let known = frameIndex[frame] {
                    indices.append(known)
                } else {
                    frameIndex[frame] = frames.count
                    indices.append(frames.count)
                    frames.append(frame)
                }
            }
            // A sample none of whose addresses could be sent says nothing: left out.
            guard !indices.isEmpty else { continue }
            samples.append(HangStack.Sample(at: seconds(time(ofSample: sample).minus(hangStart)), frames: indices))
        }
        return (HangStack(images: images, frames: frames, samples: samples), dropped)
    }

    /// Whether frames of `image` can go on the wire: a build id of 8 to 32 bytes (16 to 64
    /// hex digits) and an extent of 1 byte to ``HangStack/maximumImageSize``.
    private static func isSendable(_ image: ImageTable.Image) -> Bool {
        let digits = image.id.utf8.count
        return (16...64).contains(digits) && digits % 2 == 0 && image.size > 0 && image.size <= HangStack.maximumImageSize
    }

    /// `name` cut to the wire's longest image name, on a character boundary.
    private static func wireName(_ name: Substring) -> String {
        var name = String(name)
        while name.utf8.count > HangStack.maximumImageNameLength { name.removeLast() }
        return name
    }
}
