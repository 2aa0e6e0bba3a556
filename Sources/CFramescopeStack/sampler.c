// The Linux sampler: a real-time signal to one thread, whose handler walks its own stack.
//
// State is one 32-bit atomic word, (request id << 2) | phase, so that the requester, the
// handler and a late handler agree without a lock:
//   REQUESTED  the requester published the target and bounds, then sent the signal;
//   CLAIMED    a handler on the target thread won the request and is walking;
//   DONE       the walk is in fs_frames; the requester copies it out;
//   IDLE       no request (never sampled, or the last one timed out before any handler).
// A handler that finds anything but REQUESTED for its own thread returns at once: a signal
// that arrives after its request timed out (or was served) writes nothing.
//
// Async-signal safety of the handler (fs_sampler_handler), every call it makes:
//   gettid()             a system call wrapper (glibc ≥ 2.30), no locks, no memory;
//   syscall(SYS_futex)   FUTEX_WAKE, a system call wrapper;
//   errno                read and restored (__errno_location, thread-local, no allocation);
//   fs_walk_frames       pure C, no calls (walk.c);
// plus C11 atomics on lock-free 32-bit words and reads of the interrupted thread's stack
// between its sp and its stack's top. scripts/check-stack-sampler checks the call list in the
// compiled object.
#include "CFramescopeStack.h"

#if defined(__linux__)

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

enum { PHASE_IDLE = 0, PHASE_REQUESTED = 1, PHASE_CLAIMED = 2, PHASE_DONE = 3 };

static _Atomic uint32_t fs_state;
static _Atomic int fs_target;
static _Atomic int fs_signal;
static _Atomic int fs_busy;
static _Atomic int fs_disabled;
// Published before the state turns REQUESTED (release), read after the handler claims it
// (acquire); written by the handler before DONE (release), read after DONE (acquire).
static uintptr_t fs_stack_lo, fs_stack_hi;
static fs_text_range fs_text[FS_SAMPLER_MAX_TEXT_RANGES];
static size_t fs_text_count;
static uint64_t fs_frames[FS_SAMPLER_MAX_FRAMES];
static size_t fs_frame_count;
static uint32_t fs_next_id;
static pthread_mutex_t fs_install_lock = PTHREAD_MUTEX_INITIALIZER;

static void fs_sampler_handler(int signo, siginfo_t *info, void *context) {
    (void)signo;
    (void)info;
    int saved_errno = errno;
    uint32_t state = atomic_load_explicit(&fs_state, memory_order_acquire);
    if ((state & 3u) != PHASE_REQUESTED || gettid() != atomic_load_explicit(&fs_target, memory_order_relaxed)) {
        errno = saved_errno;
        return;
    }
    uint32_t claimed = (state & ~3u) | PHASE_CLAIMED;
    if (!atomic_compare_exchange_strong_explicit(&fs_state, &state, claimed,
                                                 memory_order_acq_rel, memory_order_relaxed)) {
        errno = saved_errno;
        return;
    }
    const ucontext_t *uc = (const ucontext_t *)context;
#if defined(__x86_64__)
    uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
    uintptr_t fp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
    uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
    uintptr_t lr = 0;
#elif defined(__aarch64__)
    uintptr_t pc = (uintptr_t)uc->uc_mcontext.pc;
    uintptr_t fp = (uintptr_t)uc->uc_mcontext.regs[29];
    uintptr_t sp = (uintptr_t)uc->uc_mcontext.sp;
    uintptr_t lr = (uintptr_t)uc->uc_mcontext.regs[30];
#else
#error "CFramescopeStack: the sampler reads registers on x86_64 and aarch64 only"
#endif
    fs_frame_count = fs_walk_frames(pc, fp, sp, lr, fs_stack_lo, fs_stack_hi, fs_text, fs_text_count,
                                    fs_frames, FS_SAMPLER_MAX_FRAMES);
    atomic_store_explicit(&fs_state, (state & ~3u) | PHASE_DONE, memory_order_release);
    syscall(SYS_futex, (uint32_t *)&fs_state, FUTEX_WAKE_PRIVATE, 1, 0, 0, 0);
    errno = saved_errno;
}

int fs_sampler_install(void) {
    pthread_mutex_lock(&fs_install_lock);
    int installed = atomic_load(&fs_signal);
    if (installed == 0) {
        for (int signo = SIGRTMIN + 4; signo <= SIGRTMAX; signo++) {
            struct sigaction old;
            if (sigaction(signo, 0, &old) != 0) continue;
            if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL) {
                struct sigaction action = {0};
                action.sa_sigaction = fs_sampler_handler;
                action.sa_flags = SA_SIGINFO | SA_RESTART;
                sigemptyset(&action.sa_mask);
                if (sigaction(signo, &action, 0) == 0) installed = signo;
                break;
            }
        }
        if (installed != 0) atomic_store(&fs_signal, installed);
    }
    pthread_mutex_unlock(&fs_install_lock);
    return installed != 0 ? installed : -1;
}

static uint64_t fs_now_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
}

/// Waits until the state leaves `expected` or `deadline` (CLOCK_MONOTONIC ns) passes; returns
/// the state seen last.
static uint32_t fs_wait_change(uint32_t expected, uint64_t deadline) {
    for (;;) {
        uint32_t state = atomic_load_explicit(&fs_state, memory_order_acquire);
        if (state != expected) return state;
        uint64_t now = fs_now_ns();
        if (now >= deadline) return state;
        uint64_t left = deadline - now;
        struct timespec timeout = { (time_t)(left / 1000000000ull), (long)(left % 1000000000ull) };
        syscall(SYS_futex, (uint32_t *)&fs_state, FUTEX_WAIT_PRIVATE, expected, &timeout, 0, 0);
    }
}

int fs_sampler_request(int tid, uintptr_t stack_lo, uintptr_t stack_hi,
                       const fs_text_range *text, size_t text_count,
                       uint64_t timeout_ns, uint64_t *out, size_t max) {
    int signo = atomic_load(&fs_signal);
    if (signo == 0) return FS_SAMPLE_NOT_INSTALLED;
    if (atomic_load(&fs_disabled)) return FS_SAMPLE_STUCK;
    int expected_busy = 0;
    if (!atomic_compare_exchange_strong(&fs_busy, &expected_busy, 1)) return FS_SAMPLE_BUSY;

    fs_next_id = (fs_next_id + 1) & 0x3FFFFFFFu;
    uint32_t requested = (fs_next_id << 2) | PHASE_REQUESTED;
    fs_stack_lo = stack_lo;
    fs_stack_hi = stack_hi;
    // The handler reads its own copy, so a handler stuck past the request (FS_SAMPLE_STUCK)
    // never reads the caller's memory.
    fs_text_count = text_count < FS_SAMPLER_MAX_TEXT_RANGES ? text_count : FS_SAMPLER_MAX_TEXT_RANGES;
    for (size_t i = 0; i < fs_text_count; i++) fs_text[i] = text[i];
    atomic_store_explicit(&fs_target, tid, memory_order_relaxed);
    atomic_store_explicit(&fs_state, requested, memory_order_release);

    int result;
    if (syscall(SYS_tgkill, getpid(), tid, signo) != 0) {
        atomic_store_explicit(&fs_state, PHASE_IDLE, memory_order_release);
        result = FS_SAMPLE_NO_THREAD;
    } else {
        uint32_t state = fs_wait_change(requested, fs_now_ns() + timeout_ns);
        uint32_t expected = requested;
        if (state == requested &&
            atomic_compare_exchange_strong_explicit(&fs_state, &expected, PHASE_IDLE,
                                                    memory_order_acq_rel, memory_order_acquire)) {
            result = FS_SAMPLE_TIMEOUT;  // no handler claimed it; a late one will find IDLE
        } else {
            // A handler claimed the request: it is walking, which takes microseconds unless
            // its thread is descheduled or stopped. Wait for it, a second at most.
            state = atomic_load_explicit(&fs_state, memory_order_acquire);
            if ((state & 3u) == PHASE_CLAIMED) {
                state = fs_wait_change(state, fs_now_ns() + 1000000000ull);
            }
            if ((state & 3u) == PHASE_DONE) {
                size_t count = fs_frame_count < max ? fs_frame_count : max;
                for (size_t i = 0; i < count; i++) out[i] = fs_frames[i];
                result = (int)count;
                atomic_store_explicit(&fs_state, PHASE_IDLE, memory_order_release);
            } else {
                // The handler still owns the static buffer: never start another request.
                atomic_store(&fs_disabled, 1);
                result = FS_SAMPLE_STUCK;
            }
        }
    }
    atomic_store(&fs_busy, 0);
    return result;
}

int fs_current_tid(void) {
    return (int)gettid();
}

#endif /* __linux__ */
