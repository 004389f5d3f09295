/* JIT tuning: a session that tunes on its first run. From the inputs of
 * that one call (the only sample), the model is inspected at that batch,
 * its top-level modules are tuned with `min-latency` (a strategy that needs
 * no other batch size to extrapolate from) on short profiles, and the plan
 * the tuner chose is what the session then runs. Results go to the tuning
 * cache (the session's folder, if any) so that the next process's first
 * call is quick; nothing else is written unless the caller saves. */
#ifndef AIT_TUNE_JIT_H
#define AIT_TUNE_JIT_H
#include "runtime/plan.h"
#include "tune/select.h"
#include "tune/tuner.h"

typedef struct jit_state {
    sample_set *samples;
    inspection *insp;
    selection sel;
    tune_report *rep;
    plan *p;
} jit_state;

typedef struct jit_opts {
    int threads;           /* candidates use 1..threads */
    const char *cache_dir; /* the tuning cache; NULL: none */
    logger log;            /* the tuner's progress and messages */
} jit_opts;

/* Tunes m on inputs (one per model input). On failure nothing is kept and
 * e says why. */
ait_status jit_tune(const ait_model *m, tensor *const *inputs, const jit_opts *o,
                    jit_state **out, ait_error *e);
void jit_free(jit_state *j); /* accepts NULL */

#endif
