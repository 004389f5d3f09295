/* `ait gemm tune`: for each shape of an untuned CSV, every candidate config
 * of the native GEMM (kernel, kc/mc/nc, pack A, loop order, split-K,
 * threads) runs in a child process killed at the timeout, is checked
 * against a float64 reference (the error ratio: the share of checked
 * elements of C off by more than float32's bound for a K-term sum; above
 * err_ratio the candidate is rejected), then timed (median of iters runs
 * after warmup). The fastest passing one becomes the shape's row, with the
 * default config's time beside it; OpenBLAS's, oneDNN's and (when
 * installed) BLIS's sgemm are checked and timed as reference points (logged,
 * never rows: the runtime could not take them). A quantised row (db.h's
 * gemm_dtype) runs qgemm (kernels/qgemm.h) at 1..threads threads (with all,
 * also under the portable ISA cap), its bound widened by the quantisation
 * steps, the float GEMM's default config timed beside it. Rows are
 * appended to the output one by one (fsync'd), so an interrupted tune
 * resumes from them; at the end the file is rewritten sorted. */
#ifndef AIT_GEMMTUNE_TUNE_H
#define AIT_GEMMTUNE_TUNE_H
#include "gemmtune/db.h"
#include "tune/profile.h"

typedef struct gt_opts {
    int mp;           /* shapes tuned at once, in processes pinned to distinct cores (0: 1) */
    double timeout;   /* seconds per candidate (0: 10) */
    double err_ratio; /* highest error ratio accepted (0 means 0: every checked element within bounds) */
    int warmup;       /* untimed runs (0: 2) */
    int iters;        /* timed runs, median kept (0: 10) */
    int threads;      /* candidates use 1..threads (0: 1) */
    bool splitk;      /* try split-K (needs threads >= 2) */
    bool all;         /* the cross product of every parameter, every kernel */
    bool refs;        /* time OpenBLAS, oneDNN and BLIS too */
    /* Time each candidate at one thread (threads <= 1, no split-K; the
     * libraries always) by the measuring thread's CPU time
     * (profile_thread_cpu_ns, as `ait tune --cpu-clock`), not the wall
     * clock: on a shared machine the wall clock counts the time other
     * processes held the core. Candidates at more threads keep the wall
     * clock. A row says which clock its us came from (gt_row.cpu_clock). */
    bool cpu_clock;
    /* Rounds of the head-to-head that a winner other than the default
     * must win (GT_CONFIRM_GAIN faster than the default, interleaved in one
     * child, iters runs a round) to become the row: 0 GT_CONFIRM_ROUNDS,
     * negative none (the lowest median wins, as before). Float rows whose A
     * is not prepacked. */
    int confirm;
    profile_clock_fn clock; /* tests: a fake clock for every candidate (NULL: as cpu_clock says) */
    logger log;       /* INFO: each shape's choice; DEBUG: each candidate */
} gt_opts;

#define GT_CONFIRM_ROUNDS 5
#define GT_CONFIRM_GAIN 1.02

ait_status gt_tune(const gt_db *untuned, const char *out_path, const gt_opts *o, ait_error *e);

/* gt_tune's steps, for a driver of its own (`ait gemm tune --mpi`):
 * gt_todo: the shapes of untuned that out_path (a tuned CSV, perhaps from an
 * interrupted tune; absent: none) lacks, into todo (the caller frees it),
 * the dearest first (queue.h's gt_order: processes or ranks that take them
 * in turn end close together);
 * writes the header into out_path when it has no row yet.
 * gt_tune_shape: one shape's row (every candidate in a child process), for
 * gt_db_append.
 * gt_finish: rewrites out_path sorted by layout, N, K, M, epilogue (the
 * order every tune leaves, whatever order its rows were appended in). */
ait_status gt_todo(const gt_db *untuned, const char *out_path, const gt_opts *o, gt_db *todo,
                   ait_error *e);
ait_status gt_tune_shape(const gt_row *in, const gt_opts *o, gt_row *out, ait_error *e);
/* How many children gt_tune_shape runs for row r (candidates and
 * libraries; not the duel, which depends on the timings). */
int gt_candidate_count(const gt_row *r, const gt_opts *o);
ait_status gt_finish(const char *out_path, ait_error *e);

/* Times row r's default and tuned config in this process, interleaved:
 * `rounds` rounds of `iters` runs each; the medians (cpu_clock: by this
 * thread's CPU time, for configs at one thread). With nlib libraries
 * (gt_ref_sgemm's names, at most GT_RETIME_MAX_LIBS), each library's sgemm
 * too, in the same rounds, its median into lib_us[j]. */
#define GT_RETIME_MAX_LIBS 4
ait_status gt_retime(const gt_row *r, int rounds, int iters, bool cpu_clock, const char *const *libs, int nlib,
                     double *def_us, double *tuned_us, double *lib_us, ait_error *e);

/* One sgemm of a reference library, C = A*B, row-major with the layout's
 * transposes ('p' read as 'n'), at one thread: "openblas", "onednn" or
 * "blis" (libblis, opened at run time: ref.c says why). */
ait_status gt_ref_sgemm(const char *lib, const char layout[3], int64_t m, int64_t n, int64_t k,
                        const float *a, const float *b, float *c, ait_error *e);
/* Whether lib can run here (BLIS: whether libblis.so.4 opened; the first
 * call opens it, once per process). */
bool gt_ref_available(const char *lib);

#endif
