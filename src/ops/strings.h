/* The string side of Cast and CastLike (strcast.c) and of Equal (strings.c). */
#ifndef AIT_OPS_STRINGS_H
#define AIT_OPS_STRINGS_H
#include "ops/op.h"

/* Casts x into y (same shape) when either is a string tensor: numbers as
 * text and back, as strings.c documents. */
ait_status str_cast(op_ctx *c, const tensor *x, tensor *y);
/* Equal of two string tensors (inputs 0 and 1, broadcast) into bool output 0. */
ait_status str_equal(op_ctx *c);

#endif
