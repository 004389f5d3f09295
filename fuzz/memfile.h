/* For fuzz targets whose parser reads a path: the bytes as an anonymous
 * regular file (memfd), named by its /proc/self/fd path. */
#ifndef AIT_FUZZ_MEMFILE_H
#define AIT_FUZZ_MEMFILE_H
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

/* Writes data[0..size) into a new memfd; its path into path[n]; -1 on failure. */
static inline int memfile(const uint8_t *data, size_t size, char *path, size_t n)
{
    int fd = memfd_create("fuzz", MFD_CLOEXEC);
    if (fd < 0) return -1;
    for (size_t done = 0; done < size;) {
        ssize_t w = write(fd, data + done, size - done);
        if (w <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)w;
    }
    snprintf(path, n, "/proc/self/fd/%d", fd);
    return fd;
}
#endif
