#include "tune/isolate.h"

#include "core/timer.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* What the child sends: this header, then the message, then the data. */
typedef struct frame {
    uint32_t magic;
    int32_t status;
    uint64_t msg_len, data_len;
} frame;
#define FRAME_MAGIC 0x41495431u /* "AIT1" */

static bool write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t k = write(fd, c, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        c += k;
        n -= (size_t)k;
    }
    return true;
}

/* The child's whole life: limits, the work, the result down the pipe.
 * Whatever it writes to stdout or stderr (a backend's library, a sanitizer)
 * goes down out_fd to the parent, never to the caller's terminal. */
static _Noreturn void child_main(int fd, int out_fd, pid_t parent, const isolate_opts *o,
                                 isolate_fn fn, void *ctx)
{
    /* A tuner that dies must not leave a hanging candidate behind. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(126);
    if (dup2(out_fd, STDOUT_FILENO) < 0 || dup2(out_fd, STDERR_FILENO) < 0) _exit(126);
    if (o->mem_limit) {
        struct rlimit rl = {o->mem_limit, o->mem_limit};
        if (setrlimit(RLIMIT_AS, &rl)) _exit(126);
    }
    ait_error ce = {0};
    const void *out = NULL;
    size_t len = 0;
    ait_status s = fn(ctx, &out, &len, &ce);
    if (s != AIT_OK || !out) len = 0;
    const char *msg = s != AIT_OK ? ce.msg : "";
    frame h = {FRAME_MAGIC, (int32_t)s, strlen(msg), len};
    bool ok = write_all(fd, &h, sizeof h) && write_all(fd, msg, h.msg_len) &&
              write_all(fd, out, len);
    _exit(ok ? 0 : 125);
}


/* Waits for pid, retrying on signals; returns its wait status. */
static int reap(pid_t pid)
{
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    return st;
}

static void kill_reap(pid_t pid, int *st)
{
    kill(pid, SIGKILL);
    *st = reap(pid);
}

typedef struct inbuf {
    char *p;
    size_t n, cap;
} inbuf;

/* The start of what the child wrote to stdout and stderr (the rest is
 * read and dropped, so that the child never blocks on a full pipe). */
typedef struct said {
    int fd;      /* -1 once at its end */
    char text[768];
    size_t n;
} said;

/* Reads what is there to read of the child's output (non-blocking fd). */
static void read_said(said *o)
{
    char tmp[4096];
    while (o->fd >= 0) {
        ssize_t r = read(o->fd, tmp, sizeof tmp);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && errno == EAGAIN) return;
        if (r <= 0) {
            o->fd = -1;
            return;
        }
        size_t take = (size_t)r < sizeof o->text - 1 - o->n ? (size_t)r : sizeof o->text - 1 - o->n;
        memcpy(o->text + o->n, tmp, take);
        o->n += take;
        o->text[o->n] = 0;
    }
}

/* When the child's time is up: a wall-clock instant, and with cpu_time a
 * limit on the child's CPU clock as well. */
typedef struct deadline {
    double wall;
    bool cpu_time;
    clockid_t cpu; /* the child's CPU clock (clock_getcpuclockid) */
    double cpu_limit;
} deadline;

/* Seconds until d may have passed (0: it has). The child's CPU clock
 * advances at most as fast as the wall clock times its threads, so with
 * cpu_time the wait is cut to a tenth of a second and asked again. */
static double time_left(const deadline *d)
{
    double left = d->wall - now_sec();
    struct timespec ts;
    if (d->cpu_time && clock_gettime(d->cpu, &ts) == 0) { /* gone: the wall clock alone */
        double cpu_left = d->cpu_limit - ((double)ts.tv_sec + (double)ts.tv_nsec * 1e-9);
        if (cpu_left <= 0) return 0;
        if (left > 0.1) left = 0.1;
    }
    return left > 0 ? left : 0;
}

/* Reads the result pipe until EOF (1), the deadline (0) or an error (-1,
 * errno), and the child's output pipe meanwhile. */
static int read_until(int fd, said *o, const deadline *dl, inbuf *b)
{
    for (;;) {
        double left = time_left(dl);
        if (left <= 0) return 0;
        struct pollfd pf[2] = {{fd, POLLIN, 0}, {o->fd, POLLIN, 0}};
        /* At most a minute per wait: a huge or infinite timeout must not
         * overflow poll's int milliseconds. */
        int k = poll(pf, o->fd >= 0 ? 2 : 1, left > 60 ? 60000 : (int)(left * 1000) + 1);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return -1;
        if (k == 0) continue; /* the deadline is checked above */
        if (o->fd >= 0 && pf[1].revents) read_said(o);
        if (!pf[0].revents) continue;
        if (b->cap - b->n < 65536) {
            size_t cap = b->cap ? b->cap * 2 : 65536 * 2;
            char *p = realloc(b->p, cap);
            if (!p) {
                errno = ENOMEM;
                return -1;
            }
            b->p = p;
            b->cap = cap;
        }
        ssize_t r = read(fd, b->p + b->n, b->cap - b->n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return -1;
        if (r == 0) return 1;
        b->n += (size_t)r;
    }
}

/* After EOF: waits for the exit until the deadline; false if it passed. */
static bool wait_until(pid_t pid, const deadline *dl, int *st)
{
    for (;;) {
        pid_t w = waitpid(pid, st, WNOHANG);
        if (w == pid) return true;
        if (w < 0 && errno != EINTR) return true; /* already gone: nothing to reap */
        if (time_left(dl) <= 0) return false;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
}

/* A failure's message gains what the child wrote (it may say why), on
 * one line. */
static void add_said(ait_error *e, const said *o)
{
    size_t n = o->n;
    while (n && (o->text[n - 1] == '\n' || o->text[n - 1] == ' ')) n--;
    if (!e || !n) return;
    size_t at = strlen(e->msg);
    err_append(e, "; it wrote: %.*s", (int)n, o->text);
    for (char *c = e->msg + at; *c; c++)
        if (*c == '\n' || *c == '\r') *c = ' ';
}

static const char *sig_name(int sig, char *buf, size_t n)
{
    const char *abbrev = sigabbrev_np(sig);
    snprintf(buf, n, "SIG%s", abbrev ? abbrev : "?");
    return buf;
}

/* Turns the bytes into the result when they are one whole frame (*whole);
 * returns the child's status, or AIT_E_NOMEM copying its data. */
static ait_status take_frame(const inbuf *b, isolate_result *r, ait_error *e, bool *whole)
{
    frame h;
    *whole = false;
    if (b->n < sizeof h) return AIT_OK;
    memcpy(&h, b->p, sizeof h);
    if (h.magic != FRAME_MAGIC || h.msg_len > b->n || h.data_len > b->n ||
        sizeof h + h.msg_len + h.data_len != b->n)
        return AIT_OK;
    *whole = true;
    const char *msg = b->p + sizeof h;
    if (h.status != AIT_OK) {
        r->fate = ISO_FAILED;
        ait_status s = (ait_status)h.status;
        if ((unsigned)s >= AIT_STATUS_COUNT) s = AIT_E_INTERNAL;
        return err_set(e, s, "in the child: %.*s", (int)h.msg_len, msg);
    }
    r->data = malloc(h.data_len ? h.data_len : 1);
    if (!r->data) return err_set(e, AIT_E_NOMEM, "no memory for the child's %llu result bytes",
                                 (unsigned long long)h.data_len);
    memcpy(r->data, msg + h.msg_len, h.data_len);
    r->len = h.data_len;
    r->fate = ISO_OK;
    return AIT_OK;
}

/* The fate and message from the wait status and whatever arrived. */
static ait_status judge(int st, const inbuf *b, isolate_result *r, ait_error *e)
{
    char sb[32];
    if (WIFSIGNALED(st)) {
        r->fate = ISO_SIGNAL;
        r->code = WTERMSIG(st);
        return err_set(e, AIT_E_INTERNAL, "killed by signal %d (%s)%s", r->code,
                       sig_name(r->code, sb, sizeof sb),
                       r->code == SIGKILL ? ", perhaps by the kernel for running out of memory"
                                          : "");
    }
    r->code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    bool whole = false;
    if (r->code == 0) {
        ait_status s = take_frame(b, r, e, &whole);
        if (whole) return s;
    }
    r->fate = ISO_EXITED;
    return err_set(e, AIT_E_INTERNAL, "exited with status %d without sending its result", r->code);
}

ait_status isolate_run(const isolate_opts *o, isolate_fn fn, void *ctx, isolate_result *r,
                       ait_error *e)
{
    *r = (isolate_result){ISO_FAILED, 0, NULL, 0};
    if (!o || !fn || !(o->timeout > 0))
        return err_set(e, AIT_E_INVALID_ARG, "isolate_run: needs a function and a timeout > 0 s");
    int fds[2], outs[2];
    if (pipe2(fds, O_CLOEXEC)) return err_set(e, AIT_E_IO, "pipe: %s", strerror(errno));
    if (pipe2(outs, O_CLOEXEC)) {
        int err = errno;
        close(fds[0]);
        close(fds[1]);
        return err_set(e, AIT_E_IO, "pipe: %s", strerror(err));
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int err = errno;
        close(fds[0]);
        close(fds[1]);
        close(outs[0]);
        close(outs[1]);
        return err_set(e, err == ENOMEM ? AIT_E_NOMEM : AIT_E_IO, "fork: %s", strerror(err));
    }
    if (pid == 0) {
        close(fds[0]);
        close(outs[0]);
        child_main(fds[1], outs[1], parent, o, fn, ctx);
    }
    close(fds[1]);
    close(outs[1]);
    said out = {.fd = outs[0]};
    fcntl(out.fd, F_SETFL, fcntl(out.fd, F_GETFL) | O_NONBLOCK);
    deadline dl = {.wall = now_sec() + o->timeout, .cpu_limit = o->timeout};
    if (o->cpu_time && clock_getcpuclockid(pid, &dl.cpu) == 0) {
        dl.cpu_time = true;
        dl.wall = now_sec() + o->timeout * ISOLATE_WALL_FACTOR;
    }
    inbuf b = {0};
    int st = 0, rd = read_until(fds[0], &out, &dl, &b);
    int rerr = errno;
    close(fds[0]);
    ait_status s;
    if (rd < 0) {
        kill_reap(pid, &st);
        s = err_set(e, rerr == ENOMEM ? AIT_E_NOMEM : AIT_E_IO, "reading the child's result: %s",
                    strerror(rerr));
    } else if (rd == 0 || !wait_until(pid, &dl, &st)) {
        bool wall = dl.cpu_time && now_sec() >= dl.wall;
        kill_reap(pid, &st);
        r->fate = ISO_TIMEOUT;
        if (!dl.cpu_time) s = err_set(e, AIT_E_INTERNAL, "timed out after %g s", o->timeout);
        else if (!wall) s = err_set(e, AIT_E_INTERNAL, "timed out after %g s of CPU time", o->timeout);
        else
            s = err_set(e, AIT_E_INTERNAL, "timed out after %g s of wall-clock time (%d times its "
                        "CPU-time limit of %g s, mostly waiting)", o->timeout * ISOLATE_WALL_FACTOR,
                        ISOLATE_WALL_FACTOR, o->timeout);
    } else {
        s = judge(st, &b, r, e);
    }
    read_said(&out); /* the child is gone: the rest is in the pipe */
    close(outs[0]);
    if (s != AIT_OK) add_said(e, &out);
    free(b.p);
    return s;
}
