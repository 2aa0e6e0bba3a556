// fs_symbol_name: dladdr, for the idle classifier (Swift's Glibc module does not export
// dladdr or Dl_info, which need _GNU_SOURCE).
#include "CFramescopeStack.h"
#include <dlfcn.h>

const char *fs_symbol_name(uintptr_t address) {
    Dl_info info;
    if (address == 0 || dladdr((const void *)address, &info) == 0) return NULL;
    return info.dli_sname;
}
