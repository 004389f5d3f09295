/* Samples: sets of model inputs to inspect and tune with, and batches made
 * from them. */
#ifndef AIT_TUNE_SAMPLES_H
#define AIT_TUNE_SAMPLES_H
#include "core/log.h"
#include "runtime/model.h"

/* One value per model input, in the model's input order (owned). */
typedef struct sample {
    tensor **values;
    char *source; /* the file or folder it came from, or "generated" */
} sample;

typedef struct sample_set {
    int n_inputs;
    int n;
    sample *s;
} sample_set;

typedef struct sample_opts {
    int batch;                /* size of batch dims of generated samples (default 1) */
    int n_dims;               /* sizes of named symbolic dims ("seq" = 128) */
    const char *dim_names[32];
    int64_t dim_vals[32];
    int count;                /* how many samples to generate (default 1) */
    uint64_t seed;
    logger log;               /* what was generated, at INFO (none: said to nobody) */
} sample_opts;

/* Loads samples from `path`: a .npz file (one sample), a folder of .npz
 * files (one sample each), or a folder of sample folders each holding one
 * NAME.npy per model input (a folder holding the .npy files directly is one
 * sample). Folders are read in name order (bytewise); hidden entries and
 * files of other types are skipped; a folder mixing layouts, or holding no
 * samples, fails. A sample missing an input, holding an array that is not
 * an input, with the wrong dtype or rank, with a declared static dim that
 * differs, or with one symbolic dim (N) of two sizes fails with a message
 * naming the file and the input. An array declaring more than max_bytes
 * (0: no limit) is refused before it is allocated (npy_check_limit). */
ait_status samples_load(const ait_model *m, const char *path, size_t max_bytes, sample_set **out,
                        ait_error *e);
/* Generates samples from the declared input dims: floats uniform in [-1, 1),
 * inputs named like masks as ones, integer inputs that index a table (token
 * ids) below its size. Symbolic dims come from opts (dims named like a batch
 * from opts->batch); an unnamed or unknown one is 1, with a note to opts->log. */
ait_status samples_generate(const ait_model *m, const sample_opts *o, sample_set **out,
                            ait_error *e);
/* Generates model input `idx` alone (what samples_generate does per input),
 * drawing random values from *rng (a splitmix64 state, advanced); says
 * what it made to opts->log. For callers that take some inputs from
 * files (ait run --input) and generate the rest. */
ait_status samples_generate_input(const ait_model *m, int idx, const sample_opts *o,
                                  uint64_t *rng, tensor **out, ait_error *e);
void sample_set_free(sample_set *s);
/* After something failed on inputs generated with o (generated[i]: input i
 * was; NULL: all were): appends to e's message which symbolic dims nobody
 * set (neither o nor a batch) and so were 1, on which input, and how to set
 * them: " (the inputs were generated, and dims nobody set were 1: input 'x'
 * dim 2 ('height'), dim 3 ('width'); set them with --dim height=V --dim
 * width=V)". Nothing when there were none. */
void samples_explain_defaults(const ait_model *m, const sample_opts *o, const bool *generated,
                              ait_error *e);
/* AIT_OK when each of o's dim names is a symbolic dim of some model input;
 * else AIT_E_INVALID_ARG naming it and listing the inputs' dim names (a
 * misspelt --dim would otherwise be dropped without a word). */
ait_status samples_check_dims(const ait_model *m, const sample_opts *o, ait_error *e);

/* The batch axis of model input i: the declared dim whose name contains
 * "batch", else axis 0 when it is symbolic (but not in a 1-D uint8 input: a
 * byte stream such as an encoded image); -1 when the input has none. */
int samples_batch_axis(const ait_model *m, int input);
/* True when samples a and b have the same shapes apart from batch axes, so
 * that they can share a batch. */
bool samples_same_shapes(const ait_model *m, const sample *a, const sample *b);
/* Builds inputs of batch size b (new tensors, caller frees) by taking rows
 * along each input's batch axis from the samples in order, cycling when
 * there are fewer than b (repeating) and stopping at b (slicing). Inputs
 * without a batch axis come from sample 0. Fails (all inputs[i] NULL),
 * naming the sample file and input, when b < 1 or when a sample whose rows
 * are needed differs from sample 0 in the other dims (so samples of
 * different seq lengths batch only to sizes sample 0 alone can fill). */
ait_status samples_batch(const ait_model *m, const sample_set *s, int b, tensor **inputs,
                         ait_error *e);

#endif
