/// Tells a stack sample of a thread parked in its run loop's wait from one of a thread at
/// work: a watched queue that does not move while its thread waits for events (a nested run
/// loop in a mode that does not serve the queue) is idle, not hanging.
///
/// A sample is idle when its innermost frame is a wait function (``waitFunctions``) in a
/// system-call image (``systemCallImages``) **and** the first frame outside those images lies
/// in the run loop's image (``runLoopImages``). A thread waiting on a lock, a pipe or a
/// synchronous call also sits in a system call, but its first frame outside the C library is
/// the app's or a framework's: it stays a hang.
///
/// - Linux: `epoll_wait` (glibc) ← `__CFRunLoopServiceFileDescriptors` ← `__CFRunLoopRun`
///   (swift-corelibs-foundation's CoreFoundation, linked into `libFoundation.so`).
/// - Apple: `mach_msg2_trap` (`libsystem_kernel.dylib`) ← … ← `mach_msg` ←
///   `__CFRunLoopServiceMachPort` ← `__CFRunLoopRun` (`CoreFoundation`).
///
/// A value: the symbol lookup is passed in (``loader`` asks the dynamic loader with `dladdr`);
/// tests pass their own. Run it after a sample, on the sampler's thread, never in the window:
/// it allocates.
struct IdleClassifier: Sendable {
    /// The functions a run loop waits for events in.
    static let waitFunctions: Set<String> = [
        "epoll_wait", "epoll_pwait", "epoll_pwait2", "poll", "ppoll",  // Linux
        "mach_msg2_trap", "mach_msg_trap",  // Apple (iOS 16 on, and before)
    ]
    /// The images that hold system-call wrappers (the wait and its callers up to the run loop).
    static let systemCallImages: Set<Substring> = [
        "libc.so.6", "libpthread.so.0",  // Linux (glibc)
        "libsystem_kernel.dylib", "libsystem_c.dylib", "libsystem_pthread.dylib",  // Apple
    ]
    /// The images a run loop's wait is called from.
    static let runLoopImages: Set<Substring> = ["libFoundation.so", "libCoreFoundation.so", "CoreFoundation"]

    /// The name of the function that holds a code address, or `nil` when none is known.
    let symbolName: @Sendable (UInt64) -> String?

    /// Whether the sample `addresses` (innermost first, as the sampler writes them) shows its
    /// thread parked in the run loop's wait; `images` are the images it was taken with.
    func isIdle(_ addresses: some Collection<UInt64>, images: ImageTable) -> Bool {
        guard let pc = addresses.first, let (first, _) = images.lookup(pc),
              Self.systemCallImages.contains(images.images[first].name),
              let name = symbolName(pc), Self.waitFunctions.contains(name) else { return false }
        for address in addresses.dropFirst() {
            guard let (index, _) = images.lookup(address) else { return false }
            let image = images.images[index].name
            if Self.systemCallImages.contains(image) { continue }
            return Self.runLoopImages.contains(image)
        }
        return false
    }
}
