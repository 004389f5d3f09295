/* The public ait_binding handle (api/binding.c), run by ait_session_run_bound
 * (api/session.c). */
#ifndef AIT_API_BINDING_H
#define AIT_API_BINDING_H
#include "core/tensor.h"

struct ait_binding {
    const ait_session *s;
    const struct ait_model *m;
    int n_in, n_out;
    tensor **in;    /* per model input: the caller's tensor, or NULL (unbound) */
    tensor **out;   /* per model output: the caller's tensor, or NULL: */
    tensor *own;    /* per model output: where an unbound one is copied (reused) */
    tensor **res;   /* per model output: a run's results, scratch */
};

/* The model session s runs (api/session.c). */
const struct ait_model *session_model(const ait_session *s);

/* Checks, before a run, that every input is bound and that no bound
 * output's memory overlaps an input's or another bound output's. */
ait_status binding_check(const ait_binding *b, ait_error *e);
/* After a successful run whose results are in b->res: the unbound outputs
 * copied into the binding's own tensors (their storage reused). */
ait_status binding_keep(ait_binding *b, ait_error *e);

#endif
