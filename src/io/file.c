/* Whole files, opened so that something that is not a regular file (a FIFO,
 * a directory, a device) is refused before any read could block. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/file.h"

static const char *kind_of(mode_t m)
{
    return S_ISFIFO(m)  ? "a FIFO"
           : S_ISDIR(m) ? "a directory"
           : S_ISCHR(m) ? "a character device"
           : S_ISBLK(m) ? "a block device"
           : S_ISSOCK(m) ? "a socket"
                         : "not a regular file";
}

ait_status file_open_regular(const char *path, int *fd, struct stat *st, ait_error *e)
{
    struct stat pre;
    *fd = -1;
    /* stat first: opening a device can itself have effects */
    if (stat(path, &pre) != 0)
        return err_set(e, AIT_E_IO, "%s: cannot open: %s", path, strerror(errno));
    if (!S_ISREG(pre.st_mode))
        return err_set(e, AIT_E_IO, "%s: is %s, not a regular file", path, kind_of(pre.st_mode));
    int f = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* swapped for a FIFO: no block */
    if (f < 0) return err_set(e, AIT_E_IO, "%s: cannot open: %s", path, strerror(errno));
    if (fstat(f, st) != 0 || !S_ISREG(st->st_mode) || st->st_dev != pre.st_dev ||
        st->st_ino != pre.st_ino) {
        close(f);
        return err_set(e, AIT_E_IO, "%s: changed while being opened, or not a regular file", path);
    }
    int fl = fcntl(f, F_GETFL);
    if (fl >= 0) (void)fcntl(f, F_SETFL, fl & ~O_NONBLOCK);
    *fd = f;
    return AIT_OK;
}

ait_status file_read_fd(int fd, uint8_t *buf, size_t n, const char *path, ait_error *e)
{
    for (size_t done = 0; done < n;) {
        ssize_t got = read(fd, buf + done, n - done > (1u << 30) ? (1u << 30) : n - done);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return err_set(e, AIT_E_IO, "%s: read failed: %s", path, strerror(errno));
        if (got == 0)
            return err_set(e, AIT_E_IO, "%s: read failed: the file shrank while being read", path);
        done += (size_t)got;
    }
    return AIT_OK;
}

ait_status file_read_all(const char *path, size_t max_bytes, uint8_t **buf, size_t *len,
                         ait_error *e)
{
    int fd;
    struct stat st;
    TRY(file_open_regular(path, &fd, &st, e));
    if (st.st_size < 0 || (uint64_t)st.st_size > max_bytes) {
        close(fd);
        return err_set(e, AIT_E_IO, "%s: size %lld is not readable (limit %zu bytes)", path,
                       (long long)st.st_size, max_bytes);
    }
    size_t size = (size_t)st.st_size;
    uint8_t *p = malloc(size + 1);
    if (!p) {
        close(fd);
        return err_set(e, AIT_E_NOMEM, "%s: out of memory reading %zu bytes", path, size);
    }
    ait_status s = file_read_fd(fd, p, size, path, e);
    close(fd);
    if (s != AIT_OK) {
        free(p);
        return s;
    }
    *buf = p;
    *len = size;
    return AIT_OK;
}
