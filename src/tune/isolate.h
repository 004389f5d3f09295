/* Isolation: run a function in a child process with a time limit, so that
 * a candidate that crashes, hangs or runs out of memory only fails itself
 * and the tuner goes on (design.md, Tuning). */
#ifndef AIT_TUNE_ISOLATE_H
#define AIT_TUNE_ISOLATE_H
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/status.h"

/* Runs in the child. On success it may set *out to result bytes (malloc'd
 * or static: the child exits right after sending them, so nothing needs
 * freeing) and *len to their size. Returns AIT_OK or a failure with its
 * message in e; both reach the parent. */
typedef ait_status (*isolate_fn)(void *ctx, const void **out, size_t *len, ait_error *e);

typedef struct isolate_opts {
    double timeout;     /* seconds (> 0); the child is killed after it */
    uint64_t mem_limit; /* bytes of address space for the child (RLIMIT_AS); 0: no limit */
    /* timeout counts the child's CPU time (every thread), not the wall
     * clock: on a machine other processes share, a child given a tenth of a
     * core is not killed for the time it waited. A child that waits without
     * running (blocked) is still killed after ISOLATE_WALL_FACTOR times the
     * timeout of wall-clock time. */
    bool cpu_time;
} isolate_opts;

#define ISOLATE_WALL_FACTOR 10

/* How the child ended. */
typedef enum isolate_fate {
    ISO_OK = 0,  /* fn returned AIT_OK and its bytes arrived */
    ISO_FAILED,  /* fn returned an error (its status and message are passed on) */
    ISO_EXITED,  /* the child exited (code in `code`) without sending a result */
    ISO_SIGNAL,  /* killed by signal `code` (a crash, or the kernel's OOM killer) */
    ISO_TIMEOUT, /* still running at the timeout: killed with SIGKILL */
} isolate_fate;

typedef struct isolate_result {
    isolate_fate fate;
    int code;    /* exit code (ISO_EXITED) or signal number (ISO_SIGNAL) */
    void *data;  /* ISO_OK: the child's bytes, malloc'd, the caller's to free(); else NULL */
    size_t len;
} isolate_result;

/* Forks, runs fn(ctx) in the child under the limits of *o, and waits for
 * it: the child is always reaped (no zombies), the parent never blocks past
 * the timeout. Returns AIT_OK only when the child's fn succeeded; else:
 *   fn's own status and message (prefixed "in the child: ") for ISO_FAILED;
 *   AIT_E_INTERNAL with "killed by signal 11 (SIGSEGV)", "exited with
 *   status 3" or "timed out after 2 s" for the others;
 *   AIT_E_IO / AIT_E_NOMEM when the pipe, fork or buffer fails.
 * *r tells the fate in every case (r->data NULL unless ISO_OK). The child's
 * stdout and stderr are a pipe to the parent: nothing it writes reaches the
 * caller's terminal, and the start of it ends a failure's message ("; it
 * wrote: ..."). The child ends with _exit: it never runs the parent's
 * atexit handlers or flushes its stdio buffers. */
ait_status isolate_run(const isolate_opts *o, isolate_fn fn, void *ctx, isolate_result *r,
                       ait_error *e);

#endif
