/* Decoder phases: from the shapes a model's inputs and outputs took, which
 * inputs are a key/value cache (a "past" input that comes back as a
 * "present" output longer along one axis) and which input axis is the
 * sequence (the length the cache grew by in every run). A model with both
 * runs two phases: prefill (many tokens) and decode (sequence 1 against a
 * growing cache), which a tuner should treat as different shapes. */
#ifndef AIT_TUNE_PHASES_H
#define AIT_TUNE_PHASES_H
#include "tune/axes.h"

#define PHASES_MAX_KV 128

/* One port's observed shapes, as the finder reads them. */
typedef struct phase_port {
    bool output;
    bool is_float;  /* a cache holds floats */
    bool is_index;  /* token ids: an integer input, preferred for the sequence */
    const axis_obs *obs;
    const axis_info *axes;
} phase_port;

typedef struct kv_pair {
    int past, present; /* port indices */
    int axis;          /* the past-length axis */
} kv_pair;

typedef struct phases {
    int seq_port, seq_axis; /* -1: no sequence axis found */
    int n_kv;
    kv_pair kv[PHASES_MAX_KV];
} phases;

/* Finds the pairs and the sequence axis among n ports. A pair: a float
 * input and output of one rank whose shapes agree in every run but on one
 * axis, where the output is longer by s_k > 0 in run k; the sequence axis:
 * an axis of another input whose size is s_k in every run (an integer
 * input first; among several axes, not a batch axis and the last). Pairs
 * whose growth matches no input axis are dropped: without a sequence there
 * is no decode phase to tell apart. */
void phases_find(const phase_port *p, int n, phases *out);

#endif
