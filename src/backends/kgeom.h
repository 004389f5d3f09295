/* A node's geometry for one of ait's kernels (src/kernels/), read from its
 * attributes and its scheduled shapes: for the backends that run the node
 * on that kernel (native's steps, oneDNN's kernel steps), so that both take
 * exactly the forms the kernel computes as the reference op does. */
#ifndef AIT_BACKENDS_KGEOM_H
#define AIT_BACKENDS_KGEOM_H
#include <stdbool.h>

#include "core/tensor.h"
#include "graph/graph.h"
#include "kernels/convt.h"
#include "kernels/resize.h"

/* Resize node n (opset 11 on) from x [n][c][h][w] to y, 2-D nearest or
 * linear (kernels/resize.h's modes); scales: its scales input (NULL when
 * absent or empty), which must be a constant (konst) float32 [1, 1, sh, sw].
 * False for anything else (cubic, antialias, axes, a kept aspect ratio,
 * align_corners over a fractional length): the reference op runs it. */
bool kgeom_resize(const node *n, const tensor *x, const tensor *y, const tensor *scales,
                  bool konst, krz_geom *g);

/* ConvTranspose node n, 2-D float32, x [n][cin][h][w], weights w
 * [cin][cout/group][kh][kw], bias b (NULL when absent; [cout]), y its
 * output: explicit pads only (auto_pad and output_shape stay on the
 * reference op), the output size as the attributes give it, int geometry.
 * False otherwise. */
bool kgeom_convt(const node *n, const tensor *x, const tensor *w, const tensor *b, const tensor *y,
                 kct_geom *g);

#endif
