/* Packing: an operand cut into panels of w rows (MR rows of A, NR columns
 * of B), each panel k x w with the w values of one k contiguous, zero past
 * the operand's edge, so micro-kernels read both streams sequentially.
 * Prepacked buffers hold the whole operand this way after a 64-byte
 * header saying what they are, so their bytes can be saved and checked
 * when read back. */
#include <stdio.h>
#include <string.h>

#include "kernels/gemm_kern.h"
#include "kernels/gemm_pack.h"
#include "kernels/isa.h"

#define MAGIC "aitgemm1"

typedef struct pack_hdr {
    char magic[8];
    char kern[24];
    int64_t is_a, k, mn, w;
} pack_hdr;
_Static_assert(sizeof(pack_hdr) <= GEMM_PACK_HDR, "header fits");

static void pack_rows_c(int w, const float *const *s, int64_t kb, float *d)
{
    for (int64_t p = 0; p < kb; p++, d += w)
        for (int r = 0; r < w; r++) d[r] = s[r][p];
}

static const struct {
    kisa isa;
    gemm_pack_rows_fn fn;
} pack_rows_impls[] = {
#if KISA_X86
    {KISA_AVX512, gemm_pack_rows_avx512},
    {KISA_AVX2, gemm_pack_rows_avx2},
#endif
    {KISA_PORTABLE, pack_rows_c},
};

static void pack_rows(int w, const float *const *s, int64_t kb, float *d)
{
    const __typeof__(pack_rows_impls[0]) *im = KISA_PICK(pack_rows_impls);
    im->fn(w, s, kb, d);
}

void gemm_pack_panels(int w, const float *x, int64_t rs_w, int64_t rs_k, int64_t rows, int64_t kb,
                      float *dst)
{
    for (int64_t r0 = 0; r0 < rows; r0 += w) {
        int wn = rows - r0 < w ? (int)(rows - r0) : w;
        float *d = dst + (r0 / w) * kb * w;
        if (rs_w == 1 && wn == w && (w == 16 || w == 32)) { /* constant sizes: inlined copies */
            for (int64_t p = 0; p < kb; p++) {
                if (w == 16)
                    __builtin_memcpy(d + p * 16, x + r0 + p * rs_k, 64);
                else
                    __builtin_memcpy(d + p * 32, x + r0 + p * rs_k, 128);
            }
            continue;
        }
        if (rs_w == 1) {
            for (int64_t p = 0; p < kb; p++) {
                memcpy(d + p * w, x + r0 + p * rs_k, sizeof(float) * (size_t)wn);
                if (wn < w) memset(d + p * w + wn, 0, sizeof(float) * (size_t)(w - wn));
            }
            continue;
        }
        if (rs_k == 1 && wn == w) { /* row-major A: w rows read side by side, d written in order */
            const float *s[32];
            for (int r = 0; r < w; r++) s[r] = x + (r0 + r) * rs_w;
            pack_rows(w, s, kb, d);
            continue;
        }
        for (int r = 0; r < wn; r++) {
            const float *s = x + (r0 + r) * rs_w;
            for (int64_t p = 0; p < kb; p++) d[p * w + r] = s[p * rs_k];
        }
        for (int r = wn; r < w; r++)
            for (int64_t p = 0; p < kb; p++) d[p * w + r] = 0.0f;
    }
}

static size_t pack_size(int w, int64_t rows, int64_t k)
{
    if (rows < 0 || k < 0) return 0;
    size_t panels = (size_t)((rows + w - 1) / w), n;
    if (__builtin_mul_overflow(panels, (size_t)w, &n) || __builtin_mul_overflow(n, (size_t)k, &n) ||
        __builtin_mul_overflow(n, sizeof(float), &n) || __builtin_add_overflow(n, GEMM_PACK_HDR, &n))
        return 0;
    return n;
}

size_t gemm_pack_a_size(const gemm_kernel *kr, int64_t m, int64_t k) { return pack_size(kr->mr, m, k); }
size_t gemm_pack_b_size(const gemm_kernel *kr, int64_t k, int64_t n) { return pack_size(kr->nr, n, k); }

static void put_hdr(const gemm_kernel *kr, bool is_a, int64_t k, int64_t mn, void *dst)
{
    pack_hdr h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, MAGIC, 8);
    snprintf(h.kern, sizeof h.kern, "%s", kr->name);
    h.is_a = is_a;
    h.k = k;
    h.mn = mn;
    h.w = is_a ? kr->mr : kr->nr;
    memset(dst, 0, GEMM_PACK_HDR);
    memcpy(dst, &h, sizeof h);
}

void gemm_pack_a(const gemm_kernel *kr, const float *a, int64_t rsa, int64_t csa, int64_t m,
                 int64_t k, void *dst)
{
    put_hdr(kr, true, k, m, dst);
    gemm_pack_panels(kr->mr, a, rsa, csa, m, k, (float *)((char *)dst + GEMM_PACK_HDR));
}

void gemm_pack_b(const gemm_kernel *kr, const float *b, int64_t rsb, int64_t csb, int64_t k,
                 int64_t n, void *dst)
{
    put_hdr(kr, false, k, n, dst);
    gemm_pack_panels(kr->nr, b, csb, rsb, n, k, (float *)((char *)dst + GEMM_PACK_HDR));
}

const gemm_kernel *gemm_packed_kernel(const void *buf, size_t size)
{
    pack_hdr h;
    if (!buf || size < GEMM_PACK_HDR) return NULL;
    memcpy(&h, buf, sizeof h);
    if (memcmp(h.magic, MAGIC, 8) != 0 || memchr(h.kern, 0, sizeof h.kern) == NULL) return NULL;
    char why[160];
    return gemm_kernel_find(h.kern, why, sizeof why);
}

ait_status gemm_packed_view(const void *buf, size_t size, gemm_packed *out, ait_error *e)
{
    pack_hdr h;
    if (!buf || size < GEMM_PACK_HDR || ((uintptr_t)buf & 63))
        return err_set(e, AIT_E_PARSE, "packed GEMM operand: %zu bytes, not a packed buffer", size);
    memcpy(&h, buf, sizeof h);
    if (memcmp(h.magic, MAGIC, 8) != 0 || memchr(h.kern, 0, sizeof h.kern) == NULL)
        return err_set(e, AIT_E_PARSE, "packed GEMM operand: bad header");
    char why[160];
    const gemm_kernel *kr = gemm_kernel_find(h.kern, why, sizeof why);
    if (!kr) return err_set(e, AIT_E_UNSUPPORTED, "packed GEMM operand: %s", why);
    int w = h.is_a ? kr->mr : kr->nr;
    size_t want = h.k >= 0 && h.mn >= 0 ? pack_size(w, h.mn, h.k) : 0;
    if (h.w != w || want == 0 || want != size)
        return err_set(e, AIT_E_PARSE,
                       "packed GEMM operand: %zu bytes, its header (%s, %lld x %lld) needs %zu",
                       size, h.kern, (long long)h.k, (long long)h.mn, want);
    out->kern = kr;
    out->is_a = h.is_a != 0;
    out->k = h.k;
    out->mn = h.mn;
    out->data = (const float *)((const char *)buf + GEMM_PACK_HDR);
    return AIT_OK;
}
