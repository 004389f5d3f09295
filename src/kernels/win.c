/* Sliding-window geometry shared by convolution and pooling kernels. */
#include "kernels/win.h"

static int div_floor(int a, int b)
{
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

int kwin_out(int in, int k, int s, int d, int pad0, int pad1, int ceil_mode)
{
    long span = (long)in + pad0 + pad1 - (long)d * (k - 1) - 1;
    if (span < 0) return 0;
    long out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
    if (ceil_mode && (out - 1) * s >= (long)in + pad0) out--; /* a window only in the end pad */
    return (int)out;
}

void kwin_inner(int out, int in, int k, int s, int d, int pad, int *lo, int *hi)
{
    /* ox * s - pad >= 0 and ox * s - pad + d * (k - 1) <= in - 1 */
    int l = pad > 0 ? (pad + s - 1) / s : 0;
    int h = div_floor(in - 1 + pad - d * (k - 1), s) + 1;
    if (h > out) h = out;
    if (h < l) h = l;
    if (l > out) l = h = out;
    *lo = l, *hi = h;
}

