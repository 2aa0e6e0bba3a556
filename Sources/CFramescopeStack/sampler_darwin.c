// The Apple sampler: suspend one Mach thread, read its registers, walk its stack, resume it.
//
// The window, from thread_suspend to thread_resume, runs only Mach calls (MIG routines that
// send a message from a stack buffer on the calling thread's reply port: no malloc, no lock of
// libc or dyld) and fs_walk_frames (pure C, no calls). Nothing else may run there: the
// suspended thread may hold the malloc lock, the dyld lock or any other, and the sampler would
// wait for it forever.
//
// Every call and its iOS availability:
//   mach_thread_self, mach_port_deallocate, mach_task_self   iOS 2.0 (before the window)
//   thread_suspend, thread_resume                            iOS 2.0
//   thread_get_state (ARM_THREAD_STATE64, x86_THREAD_STATE64) iOS 2.0
//   arm_thread_state64_get_*, arm_thread_state64_ptrauth_strip: macros of
//     <mach/arm/thread_status.h>, expanded at compile time: no run-time availability.
#include "CFramescopeStack.h"

#if defined(__APPLE__)

#include <limits.h>
#include <mach/mach.h>

int fs_darwin_sample(mach_port_t thread, uintptr_t stack_lo, uintptr_t stack_hi,
                     const fs_text_range *text, size_t text_count, uint64_t *out, size_t max) {
    if (max == 0) return 0;
    if (max > INT_MAX) max = INT_MAX;  /* the count is returned as an int */

    // Never suspend the calling thread: nothing would resume it. mach_thread_self returns a new
    // send right, given back before the window.
    mach_port_t self = mach_thread_self();
    mach_port_deallocate(mach_task_self(), self);
    if (thread == self) return FS_DARWIN_OWN_THREAD;

    if (thread_suspend(thread) != KERN_SUCCESS) return FS_DARWIN_SUSPEND_FAILED;

    // --- The window: Mach calls and fs_walk_frames only. ---
    int result;
#if defined(__arm64__)
    arm_thread_state64_t state;
    mach_msg_type_number_t count = ARM_THREAD_STATE64_COUNT;
    if (thread_get_state(thread, ARM_THREAD_STATE64, (thread_state_t)&state, &count) != KERN_SUCCESS) {
        result = FS_DARWIN_STATE_FAILED;
    } else {
        // Stripped first: on arm64e the getters would authenticate the signed pointers, and a
        // failed authentication may trap. On arm64 the strip does nothing.
        arm_thread_state64_ptrauth_strip(state);
        result = (int)fs_walk_frames((uintptr_t)arm_thread_state64_get_pc(state),
                                     (uintptr_t)arm_thread_state64_get_fp(state),
                                     (uintptr_t)arm_thread_state64_get_sp(state),
                                     (uintptr_t)arm_thread_state64_get_lr(state),
                                     stack_lo, stack_hi, text, text_count, out, max);
    }
#elif defined(__x86_64__)
    x86_thread_state64_t state;
    mach_msg_type_number_t count = x86_THREAD_STATE64_COUNT;
    if (thread_get_state(thread, x86_THREAD_STATE64, (thread_state_t)&state, &count) != KERN_SUCCESS) {
        result = FS_DARWIN_STATE_FAILED;
    } else {
        result = (int)fs_walk_frames((uintptr_t)state.__rip, (uintptr_t)state.__rbp, (uintptr_t)state.__rsp, 0,
                                     stack_lo, stack_hi, text, text_count, out, max);
    }
#else
#error "CFramescopeStack: the Apple sampler reads registers on arm64 and x86_64 only"
#endif
    if (thread_resume(thread) != KERN_SUCCESS) result = FS_DARWIN_RESUME_FAILED;
    // --- End of the window. ---
    return result;
}

#endif /* __APPLE__ */
