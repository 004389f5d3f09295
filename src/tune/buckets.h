/* A decoder's buckets (docs/tuning.md): where its sequence and past lengths
 * are read among the model's inputs (from the phases the inspection found,
 * tune/phases.h), and which sequence or past bucket a length falls in. */
#ifndef AIT_TUNE_BUCKETS_H
#define AIT_TUNE_BUCKETS_H
#include "runtime/plan.h"
#include "tune/inspect.h"

typedef struct seq_axes {
    plan_axis seq;  /* the token ids' sequence axis */
    int n_past;
    plan_axis past[PHASES_MAX_KV]; /* each cache input's past axis */
} seq_axes;

/* The decoder's axes as model input axes; false when the inspection found
 * no key/value cache with a sequence axis (plans are then keyed by batch
 * alone). */
bool seq_axes_of(const inspection *insp, seq_axes *out);

/* The bucket of sequence or past length v: with a list (n > 0, ascending)
 * the one plan_pick picks; else v itself up to 1 (0: no past; 1: the decode
 * bucket) and the power of two at or above it beyond. */
int seq_bucket(int64_t v, const int *list, int n);

/* The (seq, past) buckets the samples fall in (seq_bucket of each sample's
 * sequence and past length, with the lists given; n 0: from the lengths),
 * ascending by seq then past, into seq[] and past[] (*n of them, at most
 * PLAN_MAX_BUCKETS), and each sample's index among them into of[] (NULL:
 * not wanted); one bucket (0, 0) for a model without a sequence axis. */
struct sample_set;
ait_status seq_buckets_find(const inspection *insp, const struct sample_set *ss,
                            const int *seq_list, int n_seq, const int *past_list, int n_past,
                            int *seq, int *past, int *n, int *of, ait_error *e);

#endif
