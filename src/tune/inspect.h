/* Inspection: the module tree of a model with, per module, its size, work,
 * time share, and graph spec (its inputs and outputs with batch and dynamic
 * axes), measured by running samples at one or more batch sizes. */
#ifndef AIT_TUNE_INSPECT_H
#define AIT_TUNE_INSPECT_H
#include "core/log.h"
#include "graph/fuse.h"
#include "graph/modules.h"
#include "tune/axes.h"
#include "tune/phases.h"
#include "tune/samples.h"

/* One input or output of a module. */
typedef struct port_spec {
    int value;          /* graph value id */
    bool output;
    char locator[24];   /* "inputs[0]", "outputs[1]" */
    ait_dtype dtype;
    axis_obs obs;       /* shapes seen */
    axis_info axes;     /* classified after the runs */
} port_spec;

typedef struct module_stats {
    int n_nodes;            /* in the module and its descendants */
    int64_t params, param_bytes; /* constants read, each counted once */
    double flops;           /* per sample, at the first batch size */
    char precisions[64];    /* dtypes of its float work, e.g. "float32" */
    int64_t calls;          /* timed runs that executed it */
    double total_sec;       /* summed over its nodes and all timed runs */
    double mean_sec;        /* total / calls */
    double share;           /* of the model's time, 0..1 */
    int n_ports;
    port_spec *ports;       /* inputs first, then outputs */
} module_stats;

typedef struct inspect_opts {
    const sample_set *samples;  /* required */
    int n_batch;                /* batch sizes to run (default: {1}) */
    int batch[16];
    int warmup;                 /* untimed runs per batch size (default 1) */
    int runs;                   /* timed runs per batch size (default 5) */
    int threads;
    logger log;                 /* what each pass runs, at INFO */
    /* A decoder's sequence and past buckets (tune/buckets.h; n 0: from the
     * samples), for inspection.buckets. */
    int n_seq, seq_buckets[16];
    int n_past, past_buckets[16];
} inspect_opts;

typedef struct inspection {
    const ait_model *m;
    module_tree *tree;
    module_stats *st;           /* per module of the tree */
    int n_batch;
    int batch[16];
    bool static_shapes;         /* one batch size and one sample shape: shapes assumed static */
    double model_sec;           /* wall time of the timed runs, summed */
    double nodes_sec;           /* sum of all nodes' times (what shares divide) */
    int64_t runs;               /* timed runs in all */
    int fusions[FK_N];          /* what the fusion passes find, per kind (graph/fuse.h),
                                   with the first run's shapes */
    phases ph;                  /* the model's key/value cache pairs and sequence axis,
                                   as port indices of the root module (st[0]) */
    /* A decoder's (seq, past) buckets the samples fall in, ascending, as a
     * tune keys its plans by them (tune/buckets.h); n_phase 0 for a model
     * without a sequence axis. */
    int n_phase, phase_seq[16], phase_past[16];
} inspection;

ait_status inspect_run(const ait_model *m, const inspect_opts *o, inspection **out, ait_error *e);
void inspection_free(inspection *r);

#endif
