/* Portable "vectors" of one float for the kernel templates (see
 * vec_avx512.h): the same template code, compiled as plain C. */
#include <math.h>
#include <string.h>
#define KVEC_PLAIN /* no target pushed: vec_end.h pops none */
#define KSUF portable
#define KISA_HERE KISA_PORTABLE
#define V float
#define VL 1
static inline float vmax_portable(float a, float b)
{
    return a > b ? a : b;
}
static inline float vmin_portable(float a, float b)
{
    return a < b ? a : b;
}
static inline float vpow2i_portable(float n)
{
    int32_t i = ((int32_t)n + 127) << 23;
    float f;
    memcpy(&f, &i, sizeof f);
    return f;
}
#define vload(p) (*(p))
#define vstore(p, v) (*(p) = (v))
#define vloadn(p, r) ((void)(r), *(p))
#define vstoren(p, v, r) ((void)(r), *(p) = (v))
#define vset1(x) ((float)(x))
#define vzero() 0.0f
#define vadd(a, b) ((a) + (b))
#define vsub(a, b) ((a) - (b))
#define vmul(a, b) ((a) * (b))
#define vdiv(a, b) ((a) / (b))
#define vrcp(a) (1.0f / (a))
#define vfma(a, b, c) ((a) * (b) + (c))
#define vload_u8(p) ((float)*(const uint8_t *)(p))
#define vstoren_u8(p, v, r) ((void)(r), *(p) = (uint8_t)(int32_t)(v))
#define vmax vmax_portable
#define vmin vmin_portable
#define vabs(a) fabsf(a)
#define vcopysign(m, s) copysignf(m, s)
#define vround(a) nearbyintf(a)
#define vpow2i vpow2i_portable
#define vscalef(p, n) ((p) * vpow2i_portable(n)) /* n whole in [-127, 127] (2^-127 read as 0) */
#define vhsum(v) (v)
#define vhmax(v) (v)
#define vloads(p, s) ((void)(s), *(p))
#define vloadsn(p, s, r) ((void)(s), (void)(r), *(p))
#define vgathern(p, idx, r) ((void)(r), (p)[*(idx)])
#define vzip(a, b, lo, hi) ((lo) = (a), (hi) = (b))
#include "kernels/vec_math.h"
