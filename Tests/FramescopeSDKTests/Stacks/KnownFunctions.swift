#if os(Linux)
import Foundation
import Glibc
@testable import FramescopeSDK

// Functions the stack tests sample threads in. They are C symbols (`@_cdecl`), so that their
// addresses can be taken as C function pointers and their file addresses found with `nm`.
// `@inline(never)` keeps each a frame of its own.

/// Reads one byte from `fd`, blocking until a byte or end of file arrives; retries `EINTR`.
/// Returns what `read` returned.
@_cdecl("fs_test_block_in_read")
@inline(never)
func fsTestBlockInRead(_ fd: Int32) -> Int {
    var byte: UInt8 = 0
    while true {
        let result = read(fd, &byte, 1)
        if result >= 0 || errno != EINTR { return result }
    }
}

/// What a thread spinning in `fs_test_spin` tells and is told: ``entered`` is signalled as the
/// function starts spinning (a test waits on it rather than sleeping until the thread gets
/// there), and the function spins until ``stop`` moves.
final class Spin: Sendable {
    let stop = PingRunCounter()
    let entered = DispatchSemaphore(value: 0)

    /// The unretained pointer `fs_test_spin` and `fs_test_deep` take.
    var pointer: UnsafeRawPointer {
        UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque())
    }
}

/// Signals the ``Spin`` behind `counter` (unretained) and spins until its `stop` moves,
/// looking at it once per million steps. Returns the arithmetic's result, so it is not
/// optimised away. Allocates nothing.
@_cdecl("fs_test_spin")
@inline(never)
func fsTestSpin(_ counter: UnsafeRawPointer) -> UInt64 {
    let spin = Unmanaged<Spin>.fromOpaque(counter).takeUnretainedValue()
    spin.entered.signal()
    let stop = spin.stop
    var value: UInt64 = 0x9E37_79B9_7F4A_7C15
    while stop.value == 0 {
        for _ in 0..<1_000_000 {
            value = value &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        }
    }
    return value
}

/// Recurses `depth` levels (through `fs_test_deep`, a frame each) and spins at the bottom
/// (`fs_test_spin`, with the ``Spin`` behind `counter`): a deep stack whose innermost frames change from
/// sample to sample, like a busy app's.
@_cdecl("fs_test_deep")
@inline(never)
func fsTestDeep(_ depth: Int, _ counter: UnsafeRawPointer) -> UInt64 {
    depth <= 0 ? fsTestSpin(counter) : fsTestDeep(depth - 1, counter) &+ UInt64(depth)
}

/// Where a known function starts in memory, from a C function pointer to it.
enum KnownFunction: String, CaseIterable, Sendable {
    case blockInRead = "fs_test_block_in_read"
    case spin = "fs_test_spin"

    var address: UInt64 {
        switch self {
        case .blockInRead:
            let function: @convention(c) (Int32) -> Int = fsTestBlockInRead
            return UInt64(UInt(bitPattern: unsafeBitCast(function, to: Int.self)))
        case .spin:
            let function: @convention(c) (UnsafeRawPointer) -> UInt64 = fsTestSpin
            return UInt64(UInt(bitPattern: unsafeBitCast(function, to: Int.self)))
        }
    }

    /// Whether `address` lies in the function: within 512 bytes after its start.
    func contains(_ address: UInt64) -> Bool {
        address >= self.address && address - self.address < 512
    }
}
#endif
