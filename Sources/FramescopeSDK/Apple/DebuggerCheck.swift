#if canImport(Darwin)
import Darwin

/// Whether a debugger is attached to this process, from the kernel's own record of it
/// (Apple's Technical Q&A QA1361). ``AppLifecycle`` turns hang reports off while one is:
/// a breakpoint stops the main thread, and that stop is no hang of the app's.
enum DebuggerCheck {
    /// Whether the kernel marks this process as traced (`P_TRACED`) now. `false` when the
    /// kernel cannot be asked.
    static func isAttached() -> Bool {
        var info = kinfo_proc()
        var size = MemoryLayout<kinfo_proc>.stride
        var name: [Int32] = [CTL_KERN, KERN_PROC, KERN_PROC_PID, getpid()]
        // sysctl(3) with CTL_KERN / KERN_PROC / KERN_PROC_PID: this process's kinfo_proc (iOS 2, macOS 10.0).
        guard sysctl(&name, u_int(name.count), &info, &size, nil, 0) == 0 else { return false }
        // extern_proc.p_flag and P_TRACED (sys/proc.h): set while a debugger traces the process.
        return (info.kp_proc.p_flag & P_TRACED) != 0
    }
}
#endif
