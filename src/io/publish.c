/* Temporary files and atomic publication (see publish.h). */
#include "io/publish.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

/* Opens the folder holding path (O_DIRECTORY), or -1. */
static int dir_of(const char *path)
{
    char *copy = strdup(path);
    if (!copy) return -1;
    int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(copy);
    return fd;
}

/* Removes BASE.tmp.PID in dfd for every PID that is no longer alive: what a
 * save killed between staging and commit (or before O_TMPFILE existed) left. */
static void remove_stale(int dfd, const char *path)
{
    char *copy = strdup(path);
    if (!copy) return;
    const char *base = basename(copy);
    size_t bl = strlen(base);
    int d2 = dup(dfd);
    DIR *d = d2 >= 0 ? fdopendir(d2) : NULL;
    if (!d && d2 >= 0) close(d2);
    for (struct dirent *en; d && (en = readdir(d));) {
        const char *n = en->d_name;
        if (strncmp(n, base, bl) || strncmp(n + bl, ".tmp.", 5)) continue;
        char *end;
        long pid = strtol(n + bl + 5, &end, 10);
        if (*end || end == n + bl + 5 || pid <= 0 || pid == (long)getpid()) continue;
        if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) (void)unlinkat(dfd, n, 0);
    }
    if (d) closedir(d);
    free(copy);
}

ait_status publish_stage(const char *path, int (*body)(void *arg, int fd), void *arg,
                         char tmp[PUBLISH_PATH_MAX], ait_error *e)
{
    if (snprintf(tmp, PUBLISH_PATH_MAX, "%s.tmp.%ld", path, (long)getpid()) >= PUBLISH_PATH_MAX)
        return err_set(e, AIT_E_INVALID_ARG, "%.200s...: path too long", path);
    int dfd = dir_of(path);
    if (dfd >= 0) remove_stale(dfd, path);
    (void)unlink(tmp); /* ours from an earlier failed stage */
    int fd = -1, unnamed = 0;
#ifdef O_TMPFILE
    if (dfd >= 0) {
        fd = openat(dfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
        unnamed = fd >= 0;
    }
#endif
    if (fd < 0) fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        int err = errno;
        if (dfd >= 0) close(dfd);
        return err_set(e, AIT_E_IO, "%s: cannot create: %s", tmp, strerror(err));
    }
    int ok = body(arg, fd), err = ok ? 0 : errno;
    if (ok && fsync(fd) != 0) ok = 0, err = errno;
    if (ok && unnamed) { /* named only once whole: a kill before leaves nothing */
        char proc[64];
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
        if (linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW) != 0) ok = 0, err = errno;
    }
    if (close(fd) != 0 && ok) ok = 0, err = errno;
    if (dfd >= 0) close(dfd);
    if (!ok) {
        if (!unnamed) unlink(tmp);
        return err_set(e, AIT_E_IO, "%s: write failed: %s", path, strerror(err ? err : EIO));
    }
    return AIT_OK;
}

ait_status publish_commit(int n, char (*tmps)[PUBLISH_PATH_MAX], const char *const *paths,
                          ait_error *e)
{
    int dfd = dir_of(paths[0]);
    if (dfd >= 0) (void)flock(dfd, LOCK_EX); /* best effort: the renames stay atomic alone */
    int bad = -1, err = 0;
    for (int i = 0; i < n && bad < 0; i++)
        if (rename(tmps[i], paths[i]) != 0) bad = i, err = errno;
    if (dfd >= 0) {
        (void)fsync(dfd); /* the renames survive a crash; some file systems refuse: harmless */
        (void)flock(dfd, LOCK_UN);
        close(dfd);
    }
    if (bad < 0) return AIT_OK;
    for (int i = bad; i < n; i++) unlink(tmps[i]);
    return err_set(e, AIT_E_IO, "%s: cannot rename into place: %s", paths[bad], strerror(err));
}

typedef struct bytes_job {
    const uint8_t *p;
    size_t n;
} bytes_job;

static int bytes_body(void *arg, int fd)
{
    const bytes_job *j = arg;
    for (size_t done = 0; done < j->n;) {
        ssize_t put = write(fd, j->p + done, j->n - done > (1u << 30) ? (1u << 30) : j->n - done);
        if (put < 0 && errno == EINTR) continue;
        if (put <= 0) return 0;
        done += (size_t)put;
    }
    return 1;
}

ait_status file_write_atomic(const char *path, const void *data, size_t len, ait_error *e)
{
    char tmp[1][PUBLISH_PATH_MAX];
    bytes_job j = {data, len};
    TRY(publish_stage(path, bytes_body, &j, tmp[0], e));
    return publish_commit(1, tmp, &path, e);
}
