import CFramescopeStack
import Testing

/// `fs_walk_frames` on made-up stacks and code: the chain's checks and the rules for frame 1.
/// The stack is a buffer of words whose addresses stand for the thread's stack; the code is a
/// buffer of bytes holding call instructions, so return addresses after them look real.
@Suite("Frame walk on made-up stacks")
struct FrameWalkTests {
    /// Owns the memory of one made-up thread: 64 stack words and two code regions (the app's,
    /// framed, and a C library's, frameless), 64 bytes each.
    final class Memory {
        let stack = UnsafeMutablePointer<UInt>.allocate(capacity: 64)
        let appCode = UnsafeMutablePointer<UInt8>.allocate(capacity: 64)
        let libcCode = UnsafeMutablePointer<UInt8>.allocate(capacity: 64)

        init() {
            stack.initialize(repeating: 0, count: 64)
            appCode.initialize(repeating: 0x90, count: 64)  // nop
            libcCode.initialize(repeating: 0x90, count: 64)
            // A call at app+8 (return address app+13), another at app+24 (app+29), an indirect
            // call *%rax at app+40 (app+42); app+48 is `push %rbp`, app+49 `mov %rsp,%rbp`,
            // app+52 `ret`. A call at libc+8 (libc+13).
            for (code, at) in [(appCode, 8), (appCode, 24), (libcCode, 8)] {
                code[at] = 0xE8
                for byte in 1...4 { code[at + byte] = 0 }
            }
            appCode[40] = 0xFF
            appCode[41] = 0xD0
            appCode[48] = 0x55
            appCode[49] = 0x48
            appCode[50] = 0x89
            appCode[51] = 0xE5
            appCode[52] = 0xC3
        }

        deinit {
            stack.deallocate()
            appCode.deallocate()
            libcCode.deallocate()
        }

        func word(_ index: Int) -> UInt { UInt(bitPattern: stack + index) }
        func app(_ offset: Int) -> UInt { UInt(bitPattern: appCode + offset) }
        func libc(_ offset: Int) -> UInt { UInt(bitPattern: libcCode + offset) }
        var lo: UInt { word(0) }
        var hi: UInt { word(64) }

        /// The code ranges, sorted by start.
        var text: [fs_text_range] {
            [fs_text_range(start: app(0), end: app(64), flags: 0),
             fs_text_range(start: libc(0), end: libc(64), flags: UInt32(FS_TEXT_FRAMELESS))]
                .sorted { $0.start < $1.start }
        }

        /// Links frames at the given word indices: each saves the next one's address and a return address.
        func chain(_ frames: [(at: Int, returnAddress: UInt)]) {
            for (position, frame) in frames.enumerated() {
                stack[frame.at] = position + 1 < frames.count ? word(frames[position + 1].at) : 0
                stack[frame.at + 1] = frame.returnAddress
            }
        }

        func walk(pc: UInt, fp: UInt, sp: UInt, text: [fs_text_range]? = nil, max: Int = 32) -> [UInt] {
            var out = [UInt64](repeating: 0, count: max)
            let ranges = text ?? self.text
            let count = ranges.withUnsafeBufferPointer { ranges in
                out.withUnsafeMutableBufferPointer { out in
                    fs_walk_frames(pc, fp, sp, 0, lo, hi, ranges.baseAddress, ranges.count, out.baseAddress, max)
                }
            }
            return out.prefix(count).map { UInt($0) }
        }
    }

    @Test("The chain gives the PC, then each frame's return address, up to a zero frame pointer")
    func chain() {
        let memory = Memory()
        memory.chain([(10, memory.app(13)), (20, memory.app(29)), (30, memory.app(42))])
        let frames = memory.walk(pc: memory.app(2), fp: memory.word(10), sp: memory.word(4))
        #expect(frames == [memory.app(2), memory.app(13), memory.app(29), memory.app(42)])
    }

    @Test("The walk stops at a frame pointer that goes down, repeats, is misaligned or leaves the stack, and after max addresses")
    func checks() {
        let memory = Memory()
        memory.chain([(10, memory.app(13)), (20, memory.app(29))])
        memory.stack[20] = memory.word(15)  // down
        #expect(memory.walk(pc: 1, fp: memory.word(10), sp: memory.word(4), text: []) == [1, memory.app(13), memory.app(29)])
        memory.stack[20] = memory.word(20)  // the same
        #expect(memory.walk(pc: 1, fp: memory.word(10), sp: memory.word(4), text: []).count == 3)
        memory.stack[20] = memory.word(30) + 4  // misaligned
        #expect(memory.walk(pc: 1, fp: memory.word(10), sp: memory.word(4), text: []).count == 3)
        memory.stack[20] = memory.hi  // out of the stack
        #expect(memory.walk(pc: 1, fp: memory.word(10), sp: memory.word(4), text: []).count == 3)
        // A first frame pointer below sp, or outside the stack: the PC alone.
        #expect(memory.walk(pc: 1, fp: memory.word(2), sp: memory.word(4), text: []) == [1])
        #expect(memory.walk(pc: 1, fp: 0x10, sp: memory.word(4), text: []) == [1])
        // sp outside the stack: the PC alone.
        #expect(memory.walk(pc: 1, fp: memory.word(10), sp: memory.hi, text: []) == [1])
        // max.
        memory.chain([(10, memory.app(13)), (20, memory.app(29)), (30, memory.app(42))])
        #expect(memory.walk(pc: 1, fp: memory.word(10), sp: memory.word(4), text: [], max: 2) == [1, memory.app(13)])
        #expect(memory.walk(pc: 1, fp: memory.word(10), sp: memory.word(4), text: [], max: 0) == [])
    }

    @Test("PC in frameless code: the first framed return address above sp is frame 1; libc's own stale ones and values after no call are skipped")
    func framelessScan() {
        let memory = Memory()
        // read's layout: [sp] a stale return address into libc itself, then arguments, a
        // function pointer (app+48, not after a call), then the return address into the app.
        memory.stack[4] = memory.libc(13)
        memory.stack[5] = 3
        memory.stack[6] = memory.app(48)
        memory.stack[9] = memory.app(29)
        memory.chain([(12, memory.app(42))])
        let frames = memory.walk(pc: memory.libc(20), fp: memory.word(12), sp: memory.word(4))
        #expect(frames == [memory.libc(20), memory.app(29), memory.app(42)])
    }

    @Test("PC in frameless code whose caller has a frame: the slot at fp + 8 is not taken twice")
    func framelessNoDuplicate() {
        let memory = Memory()
        memory.chain([(6, memory.app(29))])
        let frames = memory.walk(pc: memory.libc(20), fp: memory.word(6), sp: memory.word(4))
        #expect(frames == [memory.libc(20), memory.app(29)])
    }

    @Test("PC in frameless code with a clobbered frame pointer: frame 1 from the scan, then nothing")
    func framelessClobbered() {
        let memory = Memory()
        memory.stack[7] = memory.app(13)
        let frames = memory.walk(pc: memory.libc(20), fp: 1, sp: memory.word(4))
        #expect(frames == [memory.libc(20), memory.app(13)])
    }

    @Test("The scan looks at 16 words at most")
    func scanBound() {
        let memory = Memory()
        memory.stack[4 + 16] = memory.app(13)
        #expect(memory.walk(pc: memory.libc(20), fp: 0, sp: memory.word(4)) == [memory.libc(20)])
        memory.stack[4 + 15] = memory.app(29)
        #expect(memory.walk(pc: memory.libc(20), fp: 0, sp: memory.word(4)) == [memory.libc(20), memory.app(29)])
    }

    @Test("PC in framed code: a return address near sp is taken only after a direct call to the function PC is in (a leaf without a frame)")
    func framedLeaf() {
        let memory = Memory()
        memory.chain([(10, memory.app(29))])
        // app+13 follows `call app+13` (rel32 0): a call to the code at app+13, so PC in
        // app+13 … app+13+4095 is in the called leaf.
        memory.stack[5] = memory.app(13)
        #expect(memory.walk(pc: memory.app(20), fp: memory.word(10), sp: memory.word(4)) == [memory.app(20), memory.app(13), memory.app(29)])
        // PC below the call's target: the return address belongs to another call (stale).
        #expect(memory.walk(pc: memory.app(2), fp: memory.word(10), sp: memory.word(4)) == [memory.app(2), memory.app(29)])
        // After an indirect call the target is unknown: not taken.
        memory.stack[5] = memory.app(42)
        #expect(memory.walk(pc: memory.app(44), fp: memory.word(10), sp: memory.word(4)) == [memory.app(44), memory.app(29)])
        // At fp + 8 and above, the chain has it: not taken twice.
        memory.stack[5] = 0
        memory.chain([(4, memory.app(13))])
        #expect(memory.walk(pc: memory.app(20), fp: memory.word(4), sp: memory.word(4)) == [memory.app(20), memory.app(13)])
    }

    @Test("PC at a framed function's push %rbp, mov %rsp,%rbp or ret: the return address at sp (sp + 8 after the push) is frame 1",
          arguments: [(48, 0), (52, 0), (49, 1)] as [(Int, Int)])
    func prologueAndEpilogue(pcOffset: Int, slot: Int) {
        let memory = Memory()
        memory.stack[4 + slot] = memory.app(13)
        memory.chain([(10, memory.app(29))])
        let frames = memory.walk(pc: memory.app(pcOffset), fp: memory.word(10), sp: memory.word(4))
        #expect(frames == [memory.app(pcOffset), memory.app(13), memory.app(29)])
    }

    @Test("A PC in no known code is scanned like frameless code")
    func unknownCode() {
        let memory = Memory()
        memory.stack[4] = memory.app(13)
        #expect(memory.walk(pc: 0x1000, fp: 0, sp: memory.word(4)) == [0x1000, memory.app(13)])
    }
}
