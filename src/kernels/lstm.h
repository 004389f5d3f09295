/* The LSTM's recurrence, one ISA's vector code picked per call (sigmoid
 * and tanh from vec_math.h): per step and direction, the previous h
 * against the recurrent weights R, added to that step's pre-activations
 * (the input projection, computed before for every step at once), and the
 * cell update, in one pass while the gates are in registers. */
#ifndef AIT_KERNELS_LSTM_H
#define AIT_KERNELS_LSTM_H
#include <stddef.h>

/* Hidden units per panel of packed R. */
#define KLSTM_P 16

/* Floats of one direction's R packed (klstm_pack_r) at hidden size h:
 * ceil(h / KLSTM_P) panels of h x 4 x KLSTM_P. Overflow: 0. */
size_t klstm_pack_floats(size_t h);
/* Packs one direction's R ([4h][h], gates i, o, f, c as ONNX orders them)
 * for klstm_seq: per panel of KLSTM_P hidden units, for each k, the four
 * gates' KLSTM_P weights; units past h zero. The same layout on every ISA. */
void klstm_pack_r(const float *r, size_t h, float *dst);

/* One direction of an LSTM over t steps of b rows, hidden size h. */
typedef struct klstm_dir {
    const float *pr; /* R packed by klstm_pack_r */
    const float *x;  /* pre-activations of step t, row i at x + (t * b + i) * ldx: the
                        gates i, o, f, c, h floats each (input projection and biases) */
    size_t ldx;
    const float *h0; /* [b][h] initial h, NULL: zeros */
    float *c;        /* [b][h]: the initial cell state in, the last step's out */
    float *y;        /* step t's h out, row i at y + t * ldy + i * h */
    size_t ldy;
    int rev;         /* steps from the last to the first */
} klstm_dir;

/* Runs the nd directions (the default activations: sigmoid for i, o, f,
 * tanh for c and h; c = f*c + i*c', h = o*tanh(c)); with threads > 1 the
 * directions run side by side. */
void klstm_seq(const klstm_dir *d, int nd, size_t t, size_t b, size_t h, int threads);

#endif
