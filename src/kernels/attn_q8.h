/* The attention's two GEMMs on int8 (katt_geom.q8, the int8dq variant):
 * for attn.c's GEMM path (blocks of 16 queries and more), per block of
 * queries of one head:
 *   S = Q K^T   Q's rows uint8, each at its own scale and zero point
 *               (qg_quant_rows_u8, int8dq's activations); K as int8dq's B
 *               (k = d, n = keys): key j symmetric int8 at its own scale
 *               max|k_j| / 127, packed at run time (VNNI's quads of d);
 *               int32 sums by qgemm_u8 (vpdpbusd, or the AVX2 and portable
 *               kernels of the same sums), the zero point out with the
 *               keys' sums, the attention's scale and a mask of one row per
 *               (batch, head) in its epilogue;
 *   P           the softmax's rows in float (attn_tmpl.h's att_probs:
 *               exp(s - max), 1 at the max), then uint8 at scale 1/255,
 *               zero point 0 (qg_requant_u8);
 *   Y = P V     V as int8dq's B (k = keys, n = dv): column c symmetric int8
 *               at max_j |v_jc| / 127, quads of four keys' bytes (no column
 *               sums: P's zero point is 0); the rows' scale (1/255) /
 *               sum_j p_j, the softmax's float sum.
 * The packers are per ISA (attn_q8_tmpl.h) and make the same bytes at each:
 * float multiplies and round-to-nearest-even, as a scalar model does. */
#ifndef AIT_KERNELS_ATTN_Q8_H
#define AIT_KERNELS_ATTN_Q8_H
#include <stdbool.h>
#include <stdint.h>

#include "kernels/attn.h"
#include "kernels/qgemm.h"

/* P's scale: its rows' largest element is exp(0) = 1 */
#define KATT_Q8_PSCALE (1.0f / 255.0f)

/* attn_tmpl.h's softmax rows (att_probs), the ISA's attn.c picks. */
typedef void (*katt_probs_fn)(const katt_geom *, float *, int, int, int, int, float, float *, int,
                              float *);

/* Whether g's blocks can run on int8: g->q8 set, some keys, and sums that
 * stay exact (255 * 127 * kp in int32, 127 * keys in float). */
bool katt_q8_fits(const katt_geom *g);
/* Bytes of one task's scratch for blocks of up to nq queries (64-byte
 * multiples; 0 on overflow). */
size_t katt_q8_scratch(const katt_geom *g, int nq);
/* Queries [i0, i0 + nq) of head h in batch bi on int8 (above), into y;
 * every key (past, then current) is computed, the skipping of attn.c's
 * float path is not done. ws: katt_q8_scratch(g, nq) bytes, 64-byte
 * aligned. Returns 0, or 1 with nothing written when a key or value of the
 * head is not finite (the caller runs the float path, which gives the NaN). */
int katt_q8_block(const katt_geom *g, katt_probs_fn probs, const float *q, const float *kp,
                  const float *vp, const float *kc, const float *vc, float *y, int bi, int h,
                  int i0, int nq, void *ws);

/* The packers, for the tests: the keys of (batch bi, kv head kvh) into *b
 * (qg_pack_begin(QG_INT8DQ, 0, d, sp + sc, ...)'s), tmp of KATT_Q8_KTMP(d) bytes; the
 * values into *b (qg_pack_begin(QG_INT8DQ, 0, sp + sc, dv, ...)'s, column
 * sums 0: for an A whose zero point is 0 only), rc of b->np floats and tmp
 * of 4 * b->np bytes. Scratch of any contents; false when an element is
 * not finite. */
/* The keys' tmp: 16 rows of d rounded up to 64 bytes (AVX-512 packs a
 * panel of 16 keys at a time) */
#define KATT_Q8_KTMP(d) ((size_t)16 * (((size_t)(d) + 63) & ~(size_t)63))
bool katt_q8_pack_k(const katt_geom *g, const float *kp, const float *kc, int bi, int kvh,
                    const qg_packed *b, uint8_t *tmp);
bool katt_q8_pack_v(const katt_geom *g, const float *vp, const float *vc, int bi, int kvh,
                    const qg_packed *b, float *rc, uint8_t *tmp);

#endif
