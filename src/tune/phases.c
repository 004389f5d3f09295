/* Decoder phases: key/value cache pairs and the sequence axis (phases.h). */
#include <string.h>

#include "tune/phases.h"

static bool same_runs(const axis_obs *a, const axis_obs *b)
{
    if (a->n != b->n || a->n == 0) return false;
    for (int k = 0; k < a->n; k++)
        if (a->batch[k] != b->batch[k]) return false;
    return true;
}

/* The axis along which out is longer than in in every run (the growth in
 * grow[k]), -1 if none or more than one differ. */
static int growth_axis(const axis_obs *in, const axis_obs *out, int64_t *grow)
{
    if (in->rank != out->rank || in->rank < 2 || !same_runs(in, out)) return -1;
    int axis = -1;
    for (int d = 0; d < in->rank; d++) {
        bool differs = false;
        for (int k = 0; k < in->n; k++) differs |= in->dims[k][d] != out->dims[k][d];
        if (!differs) continue;
        if (axis >= 0) return -1;
        axis = d;
    }
    if (axis < 0) return -1;
    for (int k = 0; k < in->n; k++) {
        grow[k] = out->dims[k][axis] - in->dims[k][axis];
        if (grow[k] <= 0) return -1;
    }
    return axis;
}

/* Whether axis d of port q has size grow[k] in every run (q seen in the
 * same runs as the pair). */
static bool matches(const axis_obs *q, int d, const axis_obs *pair, const int64_t *grow)
{
    if (!same_runs(q, pair) || d >= q->rank) return false;
    for (int k = 0; k < q->n; k++)
        if (q->dims[k][d] != grow[k]) return false;
    return true;
}

/* Rank of a sequence candidate: integer inputs first, then not a batch
 * axis, then the later axis (axis 0 is by convention the batch). */
static int seq_rank(const phase_port *p, int d)
{
    return (p->is_index ? 4 : 0) + (p->axes && p->axes->kind[d] == AXIS_BATCH ? 0 : 2) + (d > 0);
}

void phases_find(const phase_port *p, int n, phases *out)
{
    memset(out, 0, sizeof *out);
    out->seq_port = out->seq_axis = -1;
    int64_t grow[AXES_MAX_OBS], first[AXES_MAX_OBS];
    bool have = false;
    for (int i = 0; i < n && out->n_kv < PHASES_MAX_KV; i++) {
        if (p[i].output || !p[i].is_float) continue;
        for (int j = 0; j < n; j++) {
            if (!p[j].output || !p[j].is_float) continue;
            int axis = growth_axis(p[i].obs, p[j].obs, grow);
            if (axis < 0) continue;
            if (!have) memcpy(first, grow, sizeof grow), have = true;
            else if (memcmp(first, grow, sizeof(int64_t) * (size_t)p[i].obs->n)) continue;
            bool taken = false; /* an output pairs with one input only */
            for (int k = 0; k < out->n_kv; k++) taken |= out->kv[k].present == j;
            if (taken) continue;
            out->kv[out->n_kv++] = (kv_pair){.past = i, .present = j, .axis = axis};
            break;
        }
    }
    if (!out->n_kv) return;
    const axis_obs *ref = p[out->kv[0].past].obs;
    int best = -1;
    for (int i = 0; i < n; i++) {
        bool cache = false;
        for (int k = 0; k < out->n_kv; k++) cache |= out->kv[k].past == i;
        if (p[i].output || cache) continue;
        for (int d = 0; d < p[i].obs->rank; d++) {
            if (!matches(p[i].obs, d, ref, first)) continue;
            int r = seq_rank(&p[i], d);
            if (r > best) best = r, out->seq_port = i, out->seq_axis = d;
        }
    }
    if (out->seq_port < 0) out->n_kv = 0;
}
