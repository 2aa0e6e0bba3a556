// The loaded images (dl_iterate_phdr) and a thread's stack bounds (pthread_getattr_np), for the
// sampler's thread: both take locks and may allocate, so neither may run in a signal handler or
// while a sample is being taken.
#include "CFramescopeStack.h"

#if defined(__linux__)

#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

struct fs_images_context {
    void (*callback)(const fs_image_info *, void *);
    void *context;
    size_t count;
};

/// Copies the GNU build id from the PT_NOTE segment at [notes, notes + size), if it has one.
static void fs_read_build_id(const uint8_t *notes, size_t size, size_t align, fs_image_info *image) {
    size_t offset = 0;
    while (offset + sizeof(ElfW(Nhdr)) <= size) {
        const ElfW(Nhdr) *note = (const ElfW(Nhdr) *)(notes + offset);
        size_t name_offset = offset + sizeof(ElfW(Nhdr));
        size_t name_size = (note->n_namesz + align - 1) & ~(align - 1);
        size_t desc_size = (note->n_descsz + align - 1) & ~(align - 1);
        if (name_size > size - name_offset) return;
        size_t desc_offset = name_offset + name_size;
        if (desc_size > size - desc_offset || note->n_descsz > size - desc_offset) return;
        if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 &&
            memcmp(notes + name_offset, "GNU", 4) == 0 && note->n_descsz <= sizeof image->build_id) {
            memcpy(image->build_id, notes + desc_offset, note->n_descsz);
            image->build_id_length = note->n_descsz;
            return;
        }
        offset = desc_offset + desc_size;
    }
}

static int fs_image_callback(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    struct fs_images_context *images = data;
    fs_image_info image;
    memset(&image, 0, sizeof image);
    char executable[4096];
    image.is_executable = images->count == 0;
    image.path = info->dlpi_name ? info->dlpi_name : "";
    if (image.path[0] == 0 && image.is_executable) {
        ssize_t length = readlink("/proc/self/exe", executable, sizeof executable - 1);
        if (length > 0) {
            executable[length] = 0;
            image.path = executable;
        }
    }
    image.bias = (uintptr_t)info->dlpi_addr;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *header = &info->dlpi_phdr[i];
        if (header->p_type == PT_LOAD) {
            uint64_t end = (uint64_t)header->p_vaddr + header->p_memsz;
            if (end > image.extent) image.extent = end;
            if ((header->p_flags & PF_X) && image.text_count < 8) {
                image.text_start[image.text_count] = image.bias + header->p_vaddr;
                image.text_end[image.text_count] = image.bias + header->p_vaddr + header->p_memsz;
                image.text_count++;
            }
        } else if (header->p_type == PT_NOTE && image.build_id_length == 0) {
            size_t align = header->p_align == 8 ? 8 : 4;
            fs_read_build_id((const uint8_t *)(image.bias + header->p_vaddr), header->p_memsz, align, &image);
        }
    }
    images->count++;
    images->callback(&image, images->context);
    return 0;
}

size_t fs_images(void (*callback)(const fs_image_info *image, void *context), void *context) {
    struct fs_images_context images = { callback, context, 0 };
    dl_iterate_phdr(fs_image_callback, &images);
    return images.count;
}

int fs_thread_stack_bounds(pthread_t thread, uintptr_t *lo, uintptr_t *hi) {
    pthread_attr_t attributes;
    int error = pthread_getattr_np(thread, &attributes);
    if (error != 0) return error;
    void *address = 0;
    size_t size = 0;
    error = pthread_attr_getstack(&attributes, &address, &size);
    pthread_attr_destroy(&attributes);
    if (error != 0) return error;
    *lo = (uintptr_t)address;
    *hi = (uintptr_t)address + size;
    return 0;
}

#endif /* __linux__ */
