/* A decoder's buckets (buckets.h). */
#include "tune/buckets.h"

#include <string.h>

#include "tune/samples.h"

bool seq_axes_of(const inspection *insp, seq_axes *out)
{
    const phases *ph = &insp->ph;
    const port_spec *ports = insp->st[0].ports;
    const graph *g = insp->m->g;
    *out = (seq_axes){.seq = {-1, 0}};
    if (!ph->n_kv || ph->seq_port < 0) return false;
    for (int i = 0; i < g->n_inputs; i++) {
        if (g->inputs[i] == ports[ph->seq_port].value) out->seq = (plan_axis){i, ph->seq_axis};
        for (int k = 0; k < ph->n_kv; k++)
            if (g->inputs[i] == ports[ph->kv[k].past].value)
                out->past[out->n_past++] = (plan_axis){i, ph->kv[k].axis};
    }
    return out->seq.input >= 0 && out->n_past > 0;
}

int seq_bucket(int64_t v, const int *list, int n)
{
    if (n > 0) return list[plan_pick(list, n, v)];
    int64_t b = 1;
    if (v <= 1) return v < 0 ? 0 : (int)v;
    while (b < v && b < PLAN_BUCKET_MAX) b <<= 1;
    return (int)b;
}

static int64_t dim_of(const tensor *t, int axis)
{
    return t && axis < t->rank ? t->dims[axis] : 0;
}

ait_status seq_buckets_find(const inspection *insp, const sample_set *ss, const int *seq_list,
                            int n_seq, const int *past_list, int n_past, int *seq, int *past,
                            int *n, int *of, ait_error *e)
{
    seq_axes sa;
    *n = 1;
    seq[0] = past[0] = 0;
    for (int i = 0; of && i < ss->n; i++) of[i] = 0;
    if (!seq_axes_of(insp, &sa)) return AIT_OK;
    *n = 0;
    for (int i = 0; i < ss->n; i++) {
        tensor *const *in = ss->s[i].values;
        int sq = seq_bucket(dim_of(in[sa.seq.input], sa.seq.axis), seq_list, n_seq);
        int pa = seq_bucket(dim_of(in[sa.past[0].input], sa.past[0].axis), past_list, n_past);
        int k = 0;
        while (k < *n && (seq[k] < sq || (seq[k] == sq && past[k] < pa))) k++;
        if (k == *n || seq[k] != sq || past[k] != pa) {
            if (*n == PLAN_MAX_BUCKETS)
                return err_set(e, AIT_E_UNSUPPORTED, "%s: the samples fall in more than %d "
                               "sequence and past buckets", insp->m->path, PLAN_MAX_BUCKETS);
            memmove(&seq[k + 1], &seq[k], sizeof *seq * (size_t)(*n - k));
            memmove(&past[k + 1], &past[k], sizeof *past * (size_t)(*n - k));
            for (int j = 0; of && j < i; j++) of[j] += of[j] >= k;
            seq[k] = sq, past[k] = pa, (*n)++;
        }
        if (of) of[i] = k;
    }
    return AIT_OK;
}
