/* Sliding-window geometry along one axis, for convolution and pooling. */
#ifndef AIT_KERNELS_WIN_H
#define AIT_KERNELS_WIN_H

/* The output size: (in + pad0 + pad1 - d * (k - 1) - 1) / s + 1, rounded
 * up with ceil_mode, where (as ONNX says) a last window that would start in
 * the end pad is dropped; 0 when the window does not fit. */
int kwin_out(int in, int k, int s, int d, int pad0, int pad1, int ceil_mode);
/* The output coordinates [*lo, *hi) whose whole window (k taps, dilation d,
 * stride s, pad before `pad`) lies inside [0, in). */
void kwin_inner(int out, int in, int k, int s, int d, int pad, int *lo, int *hi);

#endif
