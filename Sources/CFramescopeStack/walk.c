// fs_walk_frames: see CFramescopeStack.h. Pure C: no function calls, no libc, so it may run in
// a signal handler or while another thread is suspended holding any lock. `nm -u` of this
// object lists nothing (scripts/check-stack-sampler checks it).
#include "CFramescopeStack.h"

#if defined(__APPLE__) && defined(__aarch64__)
// arm64e system code signs return addresses; the low 36 bits are the address (iOS user space).
#define FS_STRIP(address) ((address) & 0x0000000FFFFFFFFFull)
#else
#define FS_STRIP(address) (address)
#endif

#if defined(__aarch64__)
#define FS_FP_ALIGN 16u
#else
#define FS_FP_ALIGN 8u
#endif

/// The range holding `address`, by binary search over `text` (sorted by start), or NULL.
static const fs_text_range *fs_find_text(const fs_text_range *text, size_t count, uintptr_t address) {
    size_t low = 0, high = count;
    while (low < high) {
        size_t middle = low + (high - low) / 2;
        if (address < text[middle].start) {
            high = middle;
        } else if (address >= text[middle].end) {
            low = middle + 1;
        } else {
            return &text[middle];
        }
    }
    return 0;
}

/// Whether `fp` may be a frame pointer of the stack [sp, hi): aligned, and its two words inside.
static int fs_frame_ok(uintptr_t fp, uintptr_t sp, uintptr_t hi) {
    return fp % FS_FP_ALIGN == 0 && fp >= sp && hi >= 16 && fp <= hi - 16;
}

#if defined(__x86_64__)
/// How far into a frameless leaf function its entry may lie below the interrupted instruction.
#define FS_LEAF_SPAN 4096u

/// Whether the instruction before `address` (in `range`) is a call: E8 rel32, FF 15 disp32
/// (RIP-relative), or FF /2 with a register, [reg], [reg+disp8] or [reg+disp32] operand, with
/// or without a SIB byte. Reads only inside `range`.
static int fs_follows_call(const fs_text_range *range, uintptr_t address) {
    if (address < range->start + 7) return 0;
    const uint8_t *code = (const uint8_t *)address;
    if (code[-5] == 0xE8) return 1;                                   /* call rel32 */
    if (code[-6] == 0xFF && code[-5] == 0x15) return 1;               /* call *disp32(%rip) */
    if (code[-2] == 0xFF && (code[-1] & 0xF8) == 0xD0) return 1;      /* call *%reg */
    if (code[-2] == 0xFF && (code[-1] & 0xF8) == 0x10 && (code[-1] & 7) != 4 && (code[-1] & 7) != 5) return 1; /* call *(%reg) */
    if (code[-3] == 0xFF && (code[-2] & 0xF8) == 0x50 && (code[-2] & 7) != 4) return 1;   /* call *d8(%reg) */
    if (code[-4] == 0xFF && code[-3] == 0x54) return 1;               /* call *d8(%reg,%reg,s) */
    if (code[-3] == 0xFF && code[-2] == 0x14) return 1;               /* call *(%reg,%reg,s) */
    if (code[-6] == 0xFF && (code[-5] & 0xF8) == 0x90 && (code[-5] & 7) != 4) return 1;   /* call *d32(%reg) */
    if (code[-7] == 0xFF && code[-6] == 0x94) return 1;               /* call *d32(%reg,%reg,s) */
    return 0;
}
#endif

#if defined(__x86_64__)
/// Whether `address` follows a direct call (E8 rel32) in a text range whose target lies at
/// most FS_LEAF_SPAN bytes below `pc`: the return address of a call to the function `pc` is in.
static int fs_direct_call_target(const fs_text_range *text, size_t count, uintptr_t address, uintptr_t pc) {
    const fs_text_range *range = fs_find_text(text, count, address);
    if (range == 0 || address < range->start + 5) return 0;
    const uint8_t *code = (const uint8_t *)address;
    if (code[-5] != 0xE8) return 0;
    int32_t displacement = (int32_t)((uint32_t)code[-4] | (uint32_t)code[-3] << 8 | (uint32_t)code[-2] << 16 |
                                     (uint32_t)code[-1] << 24);
    uintptr_t target = address + (uintptr_t)(intptr_t)displacement;
    return target <= pc && pc - target < FS_LEAF_SPAN;
}
#endif

size_t fs_walk_frames(uintptr_t pc, uintptr_t fp, uintptr_t sp, uintptr_t lr,
                      uintptr_t stack_lo, uintptr_t stack_hi,
                      const fs_text_range *text, size_t text_count,
                      uint64_t *out, size_t max) {
    if (max == 0) return 0;
    size_t count = 0;
    out[count++] = (uint64_t)FS_STRIP(pc);
    if (sp < stack_lo || sp >= stack_hi || sp % 8 != 0) return count;

    int chain = fs_frame_ok(fp, sp, stack_hi);

#if defined(__x86_64__)
    (void)lr;
    if (text_count > 0) {
        const fs_text_range *here = fs_find_text(text, text_count, pc);
        if (here == 0 || (here->flags & FS_TEXT_FRAMELESS)) {
            for (size_t word = 0; word < FS_SCAN_WORDS && count < max; word++) {
                uintptr_t slot = sp + word * 8;
                if (slot > stack_hi - 8) break;
                if (chain && slot >= fp + 8) break;  /* from fp + 8 on, the chain has it */
                uintptr_t value = *(const uintptr_t *)slot;
                const fs_text_range *range = fs_find_text(text, text_count, value);
                if (range == 0 || (range->flags & FS_TEXT_FRAMELESS)) continue;
                if (!fs_follows_call(range, value)) continue;
                out[count++] = (uint64_t)value;
                break;
            }
        } else if (pc + 3 <= here->end && count < max) {
            /* Framed code stopped where its frame does not exist yet or any more: at the entry
               (`push %rbp`), between it and `mov %rsp,%rbp`, or at the `ret` after `pop %rbp`.
               The return address is then at sp (sp + 8 after the push) and fp is the caller's. */
            const uint8_t *code = (const uint8_t *)pc;
            uintptr_t slot = 0;
            if (code[0] == 0x55 || code[0] == 0xC3) {
                slot = sp;
            } else if (code[0] == 0x48 && code[1] == 0x89 && code[2] == 0xE5) {
                slot = sp + 8;
            }
            if (slot != 0 && slot <= stack_hi - 8) {
                uintptr_t value = *(const uintptr_t *)slot;
                const fs_text_range *range = fs_find_text(text, text_count, value);
                if (range != 0 && fs_follows_call(range, value)) out[count++] = (uint64_t)value;
            } else if (slot == 0) {
                /* A leaf without a frame (Swift keeps frame pointers in non-leaf functions
                   only): its return address lies near sp, after a direct call to the leaf.
                   Taken only if that call's target is at most FS_LEAF_SPAN bytes below pc, so
                   a stale return address to elsewhere is not taken for the caller. */
                for (size_t word = 0; word < FS_SCAN_WORDS && count < max; word++) {
                    uintptr_t at = sp + word * 8;
                    if (at > stack_hi - 8) break;
                    if (chain && at >= fp + 8) break;
                    uintptr_t value = *(const uintptr_t *)at;
                    if (fs_direct_call_target(text, text_count, value, pc)) {
                        out[count++] = (uint64_t)value;
                        break;
                    }
                }
            }
        }
    }
#elif defined(__aarch64__)
    lr = FS_STRIP(lr);
    if (text_count > 0 && count < max && fs_find_text(text, text_count, lr) != 0) {
        uintptr_t saved = chain ? FS_STRIP(*(const uintptr_t *)(fp + 8)) : 0;
        if (lr != saved) out[count++] = (uint64_t)lr;
    }
#else
    (void)lr;
    (void)text;
    (void)text_count;
#endif

    while (chain && count < max) {
        uintptr_t return_address = FS_STRIP(*(const uintptr_t *)(fp + 8));
        if (return_address == 0) break;
        out[count++] = (uint64_t)return_address;
        uintptr_t next = *(const uintptr_t *)fp;
        if (next <= fp || !fs_frame_ok(next, sp, stack_hi)) break;
        fp = next;
    }
    return count;
}
