/* Publishing files so that a crash, a kill or a concurrent writer never leaves
 * half a file, a stray temporary, or a mismatched pair. */
#ifndef AIT_IO_PUBLISH_H
#define AIT_IO_PUBLISH_H
#include <stddef.h>

#include "core/status.h"

#define PUBLISH_PATH_MAX 4096

/* Writes the bytes body() produces (it returns 0 on failure, errno set) into
 * an unnamed O_TMPFILE where the file system allows it, fsyncs, and only then
 * links it as tmp = PATH.tmp.PID; elsewhere the named temporary is written
 * directly. Temporaries of PATH left by dead processes are removed first. */
ait_status publish_stage(const char *path, int (*body)(void *arg, int fd), void *arg,
                         char tmp[PUBLISH_PATH_MAX], ait_error *e);
/* Renames the n staged temporaries over their paths while holding an flock on
 * the folder of paths[0], so concurrent publishers of the same names leave one
 * writer's whole set; on failure the temporaries are removed. */
ait_status publish_commit(int n, char (*tmps)[PUBLISH_PATH_MAX], const char *const *paths,
                          ait_error *e);
/* Writes data[len] as path through publish_stage and publish_commit: never
 * half a file, no named temporary left by a kill, stale ones removed. */
ait_status file_write_atomic(const char *path, const void *data, size_t len, ait_error *e);
#endif
