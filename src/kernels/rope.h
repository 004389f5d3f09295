/* The rotary position embedding (RoPE) over the last axis, float32, as
 * Llama's exports write it out: y = x * cos + rotate_half(x) * sin, with
 * rotate_half(x) = concat(-x[h:], x[:h]) and h = d / 2 (graph/fuse.h's
 * FK_ROTARY). One pass over x instead of a Slice, Neg, Concat, two Muls and
 * an Add, each a pass of its own. */
#ifndef AIT_KERNELS_ROPE_H
#define AIT_KERNELS_ROPE_H
#include <stdint.h>

/* x and y [rows][d] (d even), row r's angles in cos and sin row r % period
 * ([period][d]: the positions of the rows' sequence axis, repeated over the
 * axes before it). y may not alias x. Threads split the rows. */
void krope(const float *x, const float *cos, const float *sin, float *y, int64_t rows, int64_t period,
           int64_t d, int threads);

#endif
