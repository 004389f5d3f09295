/* Tuned GEMM configs per shape: what `ait gemm tune` chose (src/gemmtune/
 * reads and writes them as CSV) in the form the native backend looks up at
 * each GEMM, and the bytes an artifact keeps them in (so loading never
 * reads the CSV).
 *
 * Layout: two letters, A's then B's storage: 'n' row-major as given, 't'
 * transposed, 'p' prepacked (weights: the kernel is then the one that
 * packed them, so a 'p' row's kernel is left to the packing).
 *
 * dtype: "f32" (gemm_f32, cfg the whole config) or a quantised GEMM's
 * ("int8dq", "int8wo", "int4wo", "int4wo-64", "bf16", "fp16", "u8s8", ...: qgemm,
 * kernels/qgemm.h, whose one knob is cfg.threads; kern is then NULL and
 * qkern names the quantised kernel the row was tuned on).
 *
 * Lookup: a row of the same N, K, dtype and layout with the same M, else
 * the nearest M on a log2 scale (ties to the larger M) on the same side of
 * GEMM_SKINNY_M (skinny and packed-A paths differ in kind), else none. The
 * epilogue is recorded but not matched (its cost is per element of C). */
#ifndef AIT_KERNELS_GEMM_TUNED_H
#define AIT_KERNELS_GEMM_TUNED_H
#include <stdbool.h>
#include <stdint.h>

#include "kernels/gemm.h"
#include "kernels/qgemm.h"

/* A row's dtype: "f32" (the float GEMM: scheme -1), a qgemm scheme
 * ("bf16", "int8dq", "int8wo", "int4wo", "int4wo-64", "int4wo-128", "fp16": B the
 * quantised weights, A float), or "u8s8" / "s8s8" (A uint8 or int8 already
 * against int8 weights, as MatMulInteger and QLinearMatMul run: scheme
 * QG_INT8DQ, a_int -1 or 1). False when unknown. */
typedef struct gemm_dtype {
    int scheme, group, a_int;
} gemm_dtype;
bool gemm_dtype_parse(const char *s, gemm_dtype *out);

typedef struct gemm_tuned_row {
    int64_t m, n, k;
    char layout[3];
    char dtype[12];
    gemm_config cfg;
    char qkern[24]; /* a quantised row's kernel (qg_kernel_name), else "" */
    char id[96];    /* gemm_config_id, or "DTYPE.QKERN.tT" for a quantised row */
} gemm_tuned_row;

typedef struct gemm_tuned {
    int n;
    gemm_tuned_row *rows; /* owned */
    uint64_t hash;        /* of the rows (a tuner's cache key) */
} gemm_tuned;

/* The layout letters of a call's operands (see above) into out[3]. */
void gemm_layout_of(const gemm_args *g, char out[3]);
/* The row for a shape, or NULL; *exact says whether M matched. */
const gemm_tuned_row *gemm_tuned_find(const gemm_tuned *t, int64_t m, int64_t n, int64_t k,
                                      const char *dtype, const char *layout, bool *exact);
/* Adds a row (copied; an empty dtype is "f32"), filling in a quantised
 * row's id; recomputes the hash. */
ait_status gemm_tuned_add(gemm_tuned *t, const gemm_tuned_row *r, ait_error *e);
void gemm_tuned_free(gemm_tuned *t);

/* Bytes for an artifact: a header and the rows with kernels by name. */
ait_status gemm_tuned_encode(const gemm_tuned *t, void **out, size_t *len, ait_error *e);
/* Checks and decodes them (a float kernel this CPU lacks is an error;
 * blobs of the first format, without dtypes, decode as f32 rows). */
ait_status gemm_tuned_decode(const void *buf, size_t len, gemm_tuned *out, ait_error *e);

#endif
