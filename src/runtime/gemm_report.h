/* Which config each GEMM shape runs with, said once per shape: the native
 * backend calls a hook before every GEMM (candidate_cfg.gemm_seen) with the
 * call, its layout and the tuned config's id ("" for the default); a
 * gemm_report turns the first call of each (M, N, K, layout, epilogue,
 * config) into one line on its logger:
 *   gemm M=1 N=4096 K=1024 f32 np bias+relu: default config (not tuned)
 *   gemm M=1 N=1000 K=4096 f32 np bias: tuned config avx512.kc128.mc0...
 *   gemm M=1 N=768 K=768 int8dq np bias: default config (not tuned)
 * so users see which shapes miss the tuned database (docs/gemm.md). A
 * session with a log callback keeps one (DEBUG), `ait gemm capture -v`
 * another (INFO). Thread-safe: runs on several threads may share one. */
#ifndef AIT_RUNTIME_GEMM_REPORT_H
#define AIT_RUNTIME_GEMM_REPORT_H
#include <stdbool.h>
#include <stddef.h>

#include "core/log.h"
#include "kernels/gemm.h"

typedef struct gemm_report gemm_report;

/* A report saying each new shape on lg at level; NULL when lg is off (or
 * out of memory: then nothing is said). lg's user must outlive it. */
gemm_report *gemm_report_new(const logger *lg, ait_log_level level);
void gemm_report_free(gemm_report *r);
/* The hook (candidate_cfg.gemm_seen), user a gemm_report (NULL: nothing).
 * A shape it has no memory left to remember is said again, never lost. */
void gemm_report_seen(void *user, const gemm_args *g, const char *layout, const char *dtype,
                      const char *cfg);

/* The epilogue's short name ("none", "bias+relu", "scale+res", ...). */
void gemm_epi_name(const gemm_epi *ep, char *buf, size_t n);

#endif
