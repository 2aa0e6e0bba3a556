// Framescope's stack sampler: the parts that must be C.
//
// - fs_walk_frames: a frame-pointer walk with checked, bounded reads (both systems; pure C, it
//   calls no function at all, so it is async-signal-safe and safe while another thread is
//   suspended holding any lock).
// - Linux only (sampler.c, images.c): a sampler that interrupts one thread with a real-time
//   signal and walks its stack in the signal handler (fs_sampler_install, fs_sampler_request),
//   the sampled thread's stack bounds (fs_thread_stack_bounds) and the loaded images
//   (fs_images).
// - Apple only (sampler_darwin.c): fs_darwin_sample, which suspends one Mach thread, reads its
//   registers, walks its stack and resumes it. Stack bounds and images need no C there: the
//   Swift side reads them from pthread_get_stackaddr_np / pthread_get_stacksize_np and dyld.
//
// The Swift side is Sources/FramescopeSDK/Stacks/ (StackSampler, ImageTable, and their
// +Linux / +Darwin files).
#ifndef CFRAMESCOPE_STACK_H
#define CFRAMESCOPE_STACK_H

#include <stddef.h>
#include <stdint.h>
#if defined(__linux__)
#include <pthread.h>
#endif
#if defined(__APPLE__)
#include <mach/port.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/// A range of executable code, [start, end) in memory, as fs_walk_frames consults it.
typedef struct fs_text_range {
    uintptr_t start;
    uintptr_t end;
    /// FS_TEXT_* bits.
    uint32_t flags;
} fs_text_range;

/// The code in the range may run without a frame of its own (Debian's glibc is built without
/// frame pointers): when the interrupted instruction lies here, its caller's return address is
/// looked for on the stack near the stack pointer (see fs_walk_frames).
#define FS_TEXT_FRAMELESS 1u

/// Most addresses fs_sampler_request returns for one sample.
#define FS_SAMPLER_MAX_FRAMES 256

/// Most text ranges fs_sampler_request passes to the walk (more are ignored, the highest first).
#define FS_SAMPLER_MAX_TEXT_RANGES 512

/// How many words above the stack pointer the frameless rule looks at.
#define FS_SCAN_WORDS 16

/// Walks a stack from a thread's registers and writes the interrupted instruction (`pc`) and
/// then return addresses, innermost first, to `out`; returns how many (0 only when max is 0).
///
/// The walk follows the frame-pointer chain: the return address is at fp + 8 (a pointer above
/// on 32-bit-pointer systems is not supported) and the caller's frame pointer at fp. Each frame
/// pointer must be aligned (8 bytes on x86_64, 16 on arm64), lie in [sp, stack_hi - 16] and be
/// strictly greater than the one before; the walk stops at the first that is not, at a zero
/// return address, or after `max` addresses. Every read is of [sp, stack_hi) or of a text
/// range, so a garbage frame pointer cannot make it fault. On Darwin arm64 the pointer
/// authentication bits are stripped from every address.
///
/// Frame 1, the interrupted function's caller, needs a rule of its own when that function has
/// no frame (`text` sorted by start, non-overlapping, may be empty):
/// - x86_64: when `pc` lies in a range flagged FS_TEXT_FRAMELESS or in none, the ≤ 16 words
///   from `sp` up are scanned for the first that lies in an unflagged range and follows a call
///   instruction (E8 rel32, FF /2); it becomes frame 1 unless its slot is fp + 8 (the chain
///   holds it already). Stale return addresses of the frameless code itself are skipped
///   because they lie in flagged code. `pc` in framed code gets no scan (a stale return address
///   in a framed function's locals would be taken for its caller), except where the function's
///   frame does not exist: at `push %rbp` or `ret` the return address is at sp, at
///   `mov %rsp,%rbp` at sp + 8, and it is frame 1 if it follows a call. Elsewhere in framed
///   code, `pc` may be in a leaf without a frame (Swift keeps frame pointers in non-leaf
///   functions only): the ≤ 16 words from sp up (below fp + 8) are scanned for a return
///   address after a direct call (E8 rel32) whose target lies at most 4 KiB below `pc`, i.e. a
///   call to the function `pc` is in; a stale return address of another call does not pass.
/// - arm64: `lr` is frame 1 when it lies in a range and differs from [fp + 8].
/// `stack_lo` is checked against `sp` only (sp < stack_lo means the registers are not of this
/// stack: the walk returns `pc` alone).
size_t fs_walk_frames(uintptr_t pc, uintptr_t fp, uintptr_t sp, uintptr_t lr,
                      uintptr_t stack_lo, uintptr_t stack_hi,
                      const fs_text_range *text, size_t text_count,
                      uint64_t *out, size_t max);

/// The name of the exported symbol at or below `address` in its image (dladdr: glibc; iOS
/// 2.0), or NULL when none is known. The string lives as long as the image. It takes the
/// loader's lock: never in a signal handler or while another thread is suspended.
const char *fs_symbol_name(uintptr_t address);
#if defined(__linux__)

/// Results of fs_sampler_request other than a count of addresses.
#define FS_SAMPLE_TIMEOUT (-1)      /* the thread did not run the handler within the timeout */
#define FS_SAMPLE_NO_THREAD (-2)    /* tgkill failed: no such thread in this process */
#define FS_SAMPLE_NOT_INSTALLED (-3)
#define FS_SAMPLE_BUSY (-4)         /* another request is under way (one sampler at a time) */
#define FS_SAMPLE_STUCK (-5)        /* a handler began and did not finish within a second: the
                                       sampler is disabled for good */

/// Installs the sampling signal's handler, once per process, and returns its signal number, or
/// -1 when every signal of SIGRTMIN+4 … SIGRTMAX already has a handler (an app's handler is
/// never replaced) or sigaction failed. Later calls return the same number. Not for a signal
/// handler; call it from the sampler's thread before the first request.
int fs_sampler_install(void);

/// Interrupts thread `tid` of this process with the sampling signal, walks its stack in the
/// handler (fs_walk_frames with the thread's registers, the bounds and the text ranges given)
/// and copies at most `max` addresses to `out`. Waits at most `timeout_ns` for the handler.
/// Returns the number of addresses (≥ 1) or an FS_SAMPLE_* code (< 0).
///
/// One request at a time in the process (a second concurrent caller gets FS_SAMPLE_BUSY).
/// `text` (sorted by start) is copied into the sampler's own storage. A handler that runs after its request timed
/// out writes nothing. The sampled thread's interrupted `nanosleep`, `usleep`, `epoll_wait`,
/// `poll` (and other calls signal(7) lists as never restarted) return EINTR.
/// Never call it for the calling thread itself.
int fs_sampler_request(int tid, uintptr_t stack_lo, uintptr_t stack_hi,
                       const fs_text_range *text, size_t text_count,
                       uint64_t timeout_ns, uint64_t *out, size_t max);

/// The calling thread's kernel id (gettid).
int fs_current_tid(void);

/// The bounds of `thread`'s stack, [lo, hi), from pthread_getattr_np (which reads
/// /proc/self/maps for the main thread and allocates: never in a signal handler or the window).
/// Returns 0, or an errno value.
int fs_thread_stack_bounds(pthread_t thread, uintptr_t *lo, uintptr_t *hi);

/// A loaded image as fs_images reports it. Pointers are valid during the callback only.
typedef struct fs_image_info {
    /// The file's path; for the executable, /proc/self/exe resolved. Never NULL.
    const char *path;
    /// Load bias: memory address minus the file's virtual address (dlpi_addr).
    uintptr_t bias;
    /// The highest PT_LOAD p_vaddr + p_memsz: every address of the image is below bias + extent.
    uint64_t extent;
    /// Executable PT_LOAD segments in memory, [start, end); at most 8 reported.
    uintptr_t text_start[8];
    uintptr_t text_end[8];
    size_t text_count;
    /// The GNU build id (NT_GNU_BUILD_ID) bytes; build_id_length 0 when the image has none.
    uint8_t build_id[64];
    size_t build_id_length;
    /// 1 for the first image dl_iterate_phdr reports (the executable), else 0.
    int is_executable;
} fs_image_info;

/// Calls `callback` once per loaded image (dl_iterate_phdr, which holds the loader's lock
/// meanwhile: the callback must not load or unload libraries). Never in a signal handler.
/// Returns the number of images reported.
size_t fs_images(void (*callback)(const fs_image_info *image, void *context), void *context);

#endif /* __linux__ */

#if defined(__APPLE__)

/// Results of fs_darwin_sample other than a count of addresses.
#define FS_DARWIN_OWN_THREAD (-1)       /* `thread` is the calling thread: it cannot suspend itself */
#define FS_DARWIN_SUSPEND_FAILED (-2)   /* thread_suspend failed: the thread exited (or the port is no thread) */
#define FS_DARWIN_STATE_FAILED (-3)     /* thread_get_state failed; the thread was resumed */
#define FS_DARWIN_RESUME_FAILED (-4)    /* thread_resume failed after the walk (the thread is gone) */

/// Suspends Mach thread `thread` of this task, reads its registers (ARM_THREAD_STATE64 on
/// arm64, x86_THREAD_STATE64 on x86_64, the Intel simulator), walks its stack with
/// fs_walk_frames (the bounds [stack_lo, stack_hi) and the text ranges given, sorted by start)
/// and resumes it. Writes at most `max` addresses to `out` and returns how many (≥ 1; 0 when
/// max is 0) or an FS_DARWIN_* code (< 0).
///
/// Between the suspension and the resumption it calls only thread_get_state and
/// fs_walk_frames: no allocation, no lock, no log, as the suspended thread may hold any lock.
/// It resumes the thread whenever it suspended it. Refuses the calling thread
/// (FS_DARWIN_OWN_THREAD). Reentrant: it keeps no state, and two samplers of one thread nest
/// their suspensions.
int fs_darwin_sample(mach_port_t thread, uintptr_t stack_lo, uintptr_t stack_hi,
                     const fs_text_range *text, size_t text_count, uint64_t *out, size_t max);

#endif /* __APPLE__ */

#ifdef __cplusplus
}
#endif

#endif /* CFRAMESCOPE_STACK_H */
