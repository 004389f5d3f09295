/* `ait gemm capture`: run a graph on the native backend and record every
 * GEMM it ran (MatMul, Gemm, convolutions lowered to GEMM; quantised ones
 * with their dtype: int8dq, int4wo-64, u8s8, ...) as untuned rows
 * (M, N, K, dtype, layout, epilogue, count), through the backend's
 * candidate_cfg.gemm_seen hook; and `--m-sweep`, which spreads each
 * (N, K, layout, epilogue) over M. */
#ifndef AIT_GEMMTUNE_CAPTURE_H
#define AIT_GEMMTUNE_CAPTURE_H
#include "gemmtune/db.h"
#include "graph/graph.h"

struct gemm_report;

typedef struct gt_capture {
    gt_db db;                 /* untuned rows, counts summed */
    const gemm_tuned *tuned;  /* when given: the configs the runtime would take */
    logger log;               /* INFO: each new shape, tuned or not, once (runtime/gemm_report.h) */
    int threads;
    struct gemm_report *rep;  /* made at the first run: which shapes were said */
} gt_capture;

/* Builds g on native (with c->tuned) and runs it once on inputs. */
ait_status gt_capture_run(gt_capture *c, const graph *g, tensor *const *inputs, ait_error *e);
/* Frees the rows and the report (not c itself). */
void gt_capture_free(gt_capture *c);

/* "pow2:LO-HI" (powers of two from LO to HI) or "A,B,C" into ms[max]. */
ait_status gt_sweep_parse(const char *spec, int64_t *ms, int max, int *n, ait_error *e);
/* Every row of in again at each M of ms (count 0 for the new ones), into out. */
ait_status gt_sweep(const gt_db *in, const int64_t *ms, int n, gt_db *out, ait_error *e);

#endif
