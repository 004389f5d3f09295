/* The per-shape GEMM database: `ait gemm`'s CSV files.
 *
 * An untuned CSV (what `ait gemm capture` writes, what `tune` reads) has
 * the columns m,n,k,dtype,layout,epilogue,count; a tuned CSV, one row per
 * shape and CPU, has
 *   vendor,family,model,features,m,n,k,dtype,layout,epilogue,
 *   kernel,kc,mc,nc,pack_a,order,splitk,threads,us,gflops,gbs,err_ratio,default_us,skinny_nv,clock
 * (clock: "wall" or "cpu", what timed us; skinny_nv and clock may be
 * missing, as in files written before them: 0 and "wall")
 * (a row whose kernel is not the native GEMM's, "openblas" / "onednn" /
 * "blis" written by hand or by another tool, is a reference point the
 * native backend never takes (the tuner writes none: libraries are only
 * timed beside); "failed" rows record a shape no candidate passed; a
 * quantised row is taken when its kernel is the one qgemm picks here). Columns are found by the header's names, in any order; a
 * missing one, a non-numeric, zero or negative size, an unknown dtype or
 * layout, sizes whose products overflow, or two rows of one key are
 * errors naming file:line and the column. The key: CPU (tuned only), M,
 * N, K, dtype, layout, epilogue. */
#ifndef AIT_GEMMTUNE_DB_H
#define AIT_GEMMTUNE_DB_H
#include <stdbool.h>
#include <stdint.h>

#include "core/log.h"
#include "kernels/gemm_tuned.h"

typedef struct gt_cpu {
    char vendor[16];
    int family, model;
    char features[256];
} gt_cpu;

/* This machine's key (CPUID's vendor, display family and model, core/cpu.h's features). */
void gt_cpu_this(gt_cpu *c);
bool gt_cpu_same(const gt_cpu *a, const gt_cpu *b);

typedef struct gt_row {
    gt_cpu cpu;
    int64_t m, n, k;
    char dtype[12]; /* "f32", a qgemm scheme ("int8dq", "int4wo-64", ...), "u8s8" or "s8s8" */
    char layout[3];
    char epi[48];
    int64_t count; /* untuned: times the model ran it */
    char kernel[24];
    gemm_config cfg; /* kern NULL: the row's kernel is not native (or is left to the packing) */
    double us, gflops, gbs, err_ratio, default_us;
    bool cpu_clock; /* us (and default_us) timed by the thread's CPU time, not the wall clock */
    int line; /* where it was read (0: made here) */
} gt_row;

typedef struct gt_db {
    bool tuned;
    int n, cap;
    gt_row *rows;
} gt_db;

ait_status gt_db_load(const char *path, bool tuned, gt_db *db, ait_error *e);
ait_status gt_db_load_mem(const char *name, const char *text, size_t len, bool tuned, gt_db *db,
                          ait_error *e);
void gt_db_free(gt_db *db);
/* Writes all rows (published whole: never half a file). */
ait_status gt_db_save(const char *path, const gt_db *db, ait_error *e);
/* Appends one tuned row to path (the header first when the file is new or
 * empty) and fsyncs: an interrupted tune keeps every row it finished. */
ait_status gt_db_append(const char *path, const gt_row *r, ait_error *e);
/* One row as a CSV line (tuned or untuned columns) into buf[n]; -1 when too long. */
int gt_row_format(const gt_row *r, bool tuned, char *buf, size_t n);
const char *gt_header(bool tuned);


bool gt_same_key(const gt_row *a, const gt_row *b, bool tuned);
/* Adds r, or replaces the row of its key when r is faster (lower us, a
 * failed row never replaces one that passed). */
ait_status gt_db_merge(gt_db *db, const gt_row *r, ait_error *e);
/* The rows of this CPU the runtime can take (f32 rows of a native kernel,
 * quantised rows of the kernel qgemm picks here), as its lookup table;
 * *skipped: rows of another CPU (say so, they are never used). */
ait_status gt_db_tuned(const gt_db *db, const gt_cpu *cpu, gemm_tuned *out, int *skipped,
                       ait_error *e);
/* Loads a tuned CSV and takes this CPU's rows (gt_db_tuned), saying on lg
 * how many there are and how many of another CPU were skipped. */
ait_status gt_db_take(const char *path, const logger *lg, gemm_tuned *out, ait_error *e);
/* The row for a shape and dtype by gemm_tuned.h's rule (exact M, else nearest M). */
const gt_row *gt_db_lookup(const gt_db *db, const gt_cpu *cpu, int64_t m, int64_t n, int64_t k,
                           const char *dtype, const char *layout, bool *exact);

/* The size class of M for `compare`: 0 skinny (M <= 16), 1 small (<= 128),
 * 2 medium (<= 1024), 3 large. */
int gt_size_class(int64_t m);
extern const char *const gt_size_class_names[4];

#endif
