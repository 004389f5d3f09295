/* Each run after loading, one line per run: what the first run does that
 * later ones do not (issue 16). Loads an artifact as `ait run` does, binds
 * the sample's inputs (its outputs reserved for the bucket, as `ait run`
 * does) or runs ait_session_run (`session`), then times RUNS runs, the
 * first right after the load, and prints per run: the wall clock, the
 * thread's CPU time, its time on a CPU and waiting for one
 * (/proc/thread-self/schedstat), user and system time, minor and major
 * page faults, voluntary and involuntary context switches (getrusage
 * RUSAGE_THREAD), and the machine's steal time over the run (/proc/stat:
 * a virtual machine's host running something else). No hardware counter:
 * this host's guest has no PMU (`perf stat -e cycles`: not supported).
 * Under `valgrind --tool=callgrind --collect-atstart=no`, each run is
 * collected and dumped on its own (the instructions of the first against a
 * later one's: lazy work shows there, a cold cache does not).
 *
 *   bench-first-steps NAME.ait SAMPLE.npz RUNS [session] [pause MS] [spin MS] [between OTHER.npz] [touch MB]
 *       [wait MS] [busy MS] [sweep]
 *
 * pause MS: sleep that long before each even run (the first included; each
 * odd run follows the one before at once, against which it compares), to tell
 * work the kernel or the host does after the load from the library's;
 * spin MS: the same, but busy on the CPU (a loop on the clock, no memory),
 * to tell a CPU left idle (its clock, the host's scheduling of it) from
 * memory left untouched (the host reclaiming a guest's cold pages);
 * between OTHER.npz: before each even run, one untimed run of OTHER's
 * inputs (another bucket, as the load's priming runs every bucket before
 * the first request): the state another bucket leaves (caches, TLB) against
 * the steady one, pair by pair, in one process; touch MB: before each even
 * run, MB MiB of new memory (asked for huge pages, as tensor.c's big
 * buffers are) zeroed and kept, as the binding's reserve and the session's
 * output blocks are made just before a first run: what fresh memory, whose
 * pages the host may back only when touched, costs the run after it;
 * wait MS, busy MS: sleep, or spin on the clock, that long before the first
 * run only (what follows the load fades, or not, before it);
 * sweep: one byte of every 4 KiB page of every readable mapping of the
 * process (/proc/self/maps), read right after the session is made and again
 * before the first run, each pass timed (a "# sweep" line): a pass many
 * times the usual one is a process whose page mappings were dropped since
 * they were last used (each page is mapped again on its next touch, as the
 * first run's would be), and the first run after the passes pays none of it. */
#include <ait.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <valgrind/callgrind.h>

#include "io/npy.h"
#include "timer.h"

static int fail(const char *what, const char *msg)
{
    fprintf(stderr, "bench-first-steps: %s: %s\n", what, msg);
    return 1;
}

/* The machine's steal time so far, in USER_HZ ticks (every CPU). */
static long long steal(void)
{
    long long v[8] = {0};
    FILE *f = fopen("/proc/stat", "r");
    if (f) {
        if (fscanf(f, "cpu %lld %lld %lld %lld %lld %lld %lld %lld", &v[0], &v[1], &v[2], &v[3],
                   &v[4], &v[5], &v[6], &v[7]) != 8)
            v[7] = 0;
        fclose(f);
    }
    return v[7];
}

/* in[i]: the array of the .npz at path named as input i of m (every input
 * must be there); 0, or 1 said on stderr. */
static int load_inputs(const ait_model *m, const char *path, ait_tensor **in)
{
    ait_error err = {0};
    npz *z = NULL;
    if (npz_load(path, &z, &err) != AIT_OK) return fail(path, err.msg);
    int n_in = ait_model_input_count(m);
    for (int k = 0; k < z->n; k++)
        for (int i = 0; i < n_in; i++) {
            ait_value_info vi;
            ait_model_input(m, i, &vi);
            if (!strcmp(vi.name, z->names[k])) in[i] = z->arrays[k], z->arrays[k] = NULL;
        }
    npz_free(z);
    for (int i = 0; i < n_in; i++)
        if (!in[i]) return fail(path, "an input of the model is not in the sample");
    return 0;
}

/* sweep: reads a byte of every page of the process's readable mappings. */
static void sweep_pages(const char *where)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096];
    size_t bytes = 0;
    unsigned long sum = 0;
    double t0 = now_s();
    while (f && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char perm[8];
        if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perm) != 3 || perm[0] != 'r') continue;
        if (strstr(line, "[vvar") || strstr(line, "[vsyscall")) continue;
        for (unsigned long p = lo; p < hi; p += 4096) sum += *(volatile unsigned char *)p;
        bytes += hi - lo;
    }
    if (f) fclose(f);
    printf("# sweep %s: %.1f MiB in %.1f ms (%lu)\n", where, (double)bytes / (1 << 20),
           (now_s() - t0) * 1e3, sum & 1);
}

static double tv(struct timeval t) { return (double)t.tv_sec + (double)t.tv_usec * 1e-6; }

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: bench-first-steps NAME.ait SAMPLE.npz RUNS [session] [pause MS]\n");
        return 2;
    }
    int runs = atoi(argv[3]), session = 0, pause_ms = 0, spin_ms = 0;
    const char *between = NULL;
    size_t touch = 0;
    int wait_ms = 0, busy_ms = 0, sweep = 0;
    for (int a = 4; a < argc; a++) {
        if (!strcmp(argv[a], "session")) session = 1;
        else if (!strcmp(argv[a], "pause") && a + 1 < argc) pause_ms = atoi(argv[++a]);
        else if (!strcmp(argv[a], "spin") && a + 1 < argc) spin_ms = atoi(argv[++a]);
        else if (!strcmp(argv[a], "between") && a + 1 < argc) between = argv[++a];
        else if (!strcmp(argv[a], "touch") && a + 1 < argc) touch = (size_t)atol(argv[++a]) << 20;
        else if (!strcmp(argv[a], "wait") && a + 1 < argc) wait_ms = atoi(argv[++a]);
        else if (!strcmp(argv[a], "busy") && a + 1 < argc) busy_ms = atoi(argv[++a]);
        else if (!strcmp(argv[a], "sweep")) sweep = 1;
        else return fail(argv[a], "unknown argument");
    }
    if (runs < 1) return fail(argv[3], "RUNS must be 1 or more");
    ait_error err = {0};
    ait_model *m = NULL;
    ait_session *s = NULL;
    ait_binding *b = NULL;
    ait_artifact_options ao = {.size = sizeof ao};
    double l0 = now_s();
    if (ait_artifact_load(argv[1], &ao, &m, &err) != AIT_OK) return fail(argv[1], err.msg);
    ait_session_options so = {.size = sizeof so, .threads = 1, .no_output_blocks = !session};
    if (ait_session_create(m, &so, &s, &err) != AIT_OK) return fail(argv[1], err.msg);
    double l1 = now_s();
    if (sweep) sweep_pages("after the session");
    int n_in = ait_model_input_count(m), n_out = ait_model_output_count(m);
    if (n_in > 512 || n_out > 512) return fail(argv[1], "more than 512 inputs or outputs");
    ait_tensor *in[512] = {0}, *out[512] = {0}, *in2[512] = {0}, *out2[512] = {0};
    if (load_inputs(m, argv[2], in) || (between && load_inputs(m, between, in2))) return 1;
    size_t reserved = 0;
    if (!session) {
        if (ait_binding_create(s, &b, &err) != AIT_OK) return fail(argv[1], err.msg);
        for (int i = 0; i < n_in; i++)
            if (ait_binding_set_input(b, i, in[i], &err) != AIT_OK) return fail(argv[1], err.msg);
        if (ait_binding_reserve(b, &reserved, &err) != AIT_OK) return fail(argv[1], err.msg);
    }
    printf("# %s %s: load and session %.0f ms (ended at %.3f s, CLOCK_MONOTONIC), %s path, outputs "
           "reserved %.1f MiB, pause %d ms, spin %d ms\n", argv[1], argv[2], (l1 - l0) * 1e3, l1, session ? "session" : "binding",
           (double)reserved / (1 << 20), pause_ms, spin_ms);
    printf("# run t_ms wall_ms cpu_ms oncpu_ms wait_ms user_ms sys_ms minflt majflt nvcsw nivcsw "
           "steal_ticks between_cpu_ms\n");
    struct timespec ps = {pause_ms / 1000, (long)(pause_ms % 1000) * 1000000L};
    struct timespec ws = {wait_ms / 1000, (long)(wait_ms % 1000) * 1000000L};
    if (wait_ms) nanosleep(&ws, NULL);
    for (double t = now_s(); now_s() - t < busy_ms * 1e-3;) {
    }
    if (sweep) sweep_pages("before the first run");
    for (int r = 0; r < runs; r++) {
        for (int j = 0; session && j < n_out; j++) ait_tensor_free(out[j]), out[j] = NULL;
        double bt = 0; /* the other bucket's run, thread CPU ms */
        if (between && r % 2 == 0) {
            double b0 = thread_cpu_s();
            if (ait_session_run(s, in2, n_in, out2, n_out) != AIT_OK) return fail(between, ait_session_error(s));
            bt = (thread_cpu_s() - b0) * 1e3;
            for (int j = 0; j < n_out; j++) ait_tensor_free(out2[j]), out2[j] = NULL;
        }
        if (touch && r % 2 == 0) {
            void *p = mmap(NULL, touch, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p == MAP_FAILED) return fail("touch", "no memory");
            (void)madvise(p, touch, MADV_HUGEPAGE);
            memset(p, 0, touch); /* kept: the next is fresh too */
        }
        if (pause_ms && r % 2 == 0) nanosleep(&ps, NULL);
        for (double t = now_s(); r % 2 == 0 && now_s() - t < spin_ms * 1e-3;) {
        }
        struct rusage u0, u1;
        double r0, q0, r1, q1;
        long long st0 = steal();
        getrusage(RUSAGE_THREAD, &u0);
        thread_sched_s(&r0, &q0);
        double w0 = now_s(), c0 = thread_cpu_s();
        CALLGRIND_TOGGLE_COLLECT;
        ait_status rs = session ? ait_session_run(s, in, n_in, out, n_out) : ait_session_run_bound(s, b);
        CALLGRIND_TOGGLE_COLLECT;
        double c1 = thread_cpu_s(), w1 = now_s();
        thread_sched_s(&r1, &q1);
        getrusage(RUSAGE_THREAD, &u1);
        long long st1 = steal();
        char name[32];
        snprintf(name, sizeof name, "run %d", r);
        CALLGRIND_DUMP_STATS_AT(name);
        if (rs != AIT_OK) return fail(argv[1], ait_session_error(s));
        printf("%d %.1f %.3f %.3f %.3f %.3f %.3f %.3f %ld %ld %ld %ld %lld %.3f\n", r, (w0 - l1) * 1e3, (w1 - w0) * 1e3,
               (c1 - c0) * 1e3, (r1 - r0) * 1e3, (q1 - q0) * 1e3,
               (tv(u1.ru_utime) - tv(u0.ru_utime)) * 1e3, (tv(u1.ru_stime) - tv(u0.ru_stime)) * 1e3,
               u1.ru_minflt - u0.ru_minflt, u1.ru_majflt - u0.ru_majflt, u1.ru_nvcsw - u0.ru_nvcsw,
               u1.ru_nivcsw - u0.ru_nivcsw, st1 - st0, bt);
        fflush(stdout);
    }
    for (int j = 0; j < n_out; j++) ait_tensor_free(out[j]);
    for (int i = 0; i < n_in; i++) ait_tensor_free(in[i]), ait_tensor_free(in2[i]);
    ait_binding_free(b);
    ait_session_free(s);
    ait_model_free(m);
    return 0;
}
