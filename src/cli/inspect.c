/* ait inspect: the module tree with sizes, work, time shares and graph
 * specs, measured on samples at one or more batch sizes. */
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/inspect_cli.h"

static const char *inspect_help =
    "usage: ait inspect MODEL.onnx [options]\n"
    "\n"
    "Runs samples through the model at each batch size, times every node, and\n"
    "prints one row per module (a PyTorch scope such as 'layer1.0.conv1'; models\n"
    "without scope names are cut into 'seg.K' segments of comparable FLOPs where\n"
    "one tensor flows on):\n"
    "node count, parameters and their bytes, FLOPs per sample, precisions,\n"
    "calls, total and mean time, and share of the model's time. Then whether\n"
    "shapes are assumed static, and how much of the wall time the nodes cover.\n"
    "\n"
    "samples:\n"
    "  --data PATH            a .npz, a folder of .npz files, or a folder of sample\n"
    "                         folders with one NAME.npy per input (default: one\n"
    "                         sample generated from the declared input dims)\n"
    "  --max-input-mb N       refuse a sample array (a .npy, an .npz entry) that\n"
    "                         declares more than N MiB, before reading it\n"
    "  --dim NAME=V           size of symbolic dim NAME of generated samples\n"
    "  --batch-sizes 1,2,4    batch sizes to run (default 1); two or more find\n"
    "                         the batch and dynamic axes of every module's ports\n"
    "  --seq-buckets LIST --past-buckets LIST\n"
    "                         a decoder's buckets the samples are listed in (as\n"
    "                         `ait tune` takes them; default: from the samples)\n"
    "  --runs N               timed runs per batch size (default 5)\n"
    "  --threads N            threads (default 1)\n"
    "\n"
    "view:\n"
    "  --min-depth N          hide modules above depth N (the model is depth 0)\n"
    "  --max-depth N          hide modules below depth N\n"
    "  --min-share F          hide modules under share F (0.05 or 5%)\n"
    "  --limit N              at most N rows\n"
    "  --module NAME          only module NAME, with its graph spec: inputs and\n"
    "                         outputs with Locator, Name, Shape (batch0 / dimN\n"
    "                         name the batch and dynamic axes), Min/Max Shape, Dtype\n"
    "  --json                 the same as one JSON document on stdout\n"
    "\n"
    "selection (marked '*' in the table; what `ait tune` tunes):\n"
    "  --select PATH[=STRATEGY]  module PATH, or every outermost module whose path\n"
    "                         starts with PATH when it ends in '*' (repeatable)\n"
    "  --top N                the N modules with the biggest share\n"
    "  --select-min-share F   the modules with at least share F\n"
    "  --select-depth N       the depth --top and --select-min-share pick at\n"
    "                         (default 1: top-level modules)\n"
    "  --strategy NAME        strategy of selected modules: first-wins,\n"
    "                         one-backend:NAME, max-throughput (default),\n"
    "                         min-latency, latency-budget:MS, only:NAME\n"
    "\n"
    "examples:\n"
    "  ait inspect models/resnet18.onnx --max-depth 2\n"
    "  ait inspect models/bert.onnx --dim seq=128 --batch-sizes 1,2 --module encoder.layer.0\n"
    "  ait inspect models/bert.onnx --batch-sizes 1,2 --top 3 --select-depth 3 --json\n";

int cmd_inspect(int argc, char **argv)
{
    insp_args a;
    int rc = insp_parse(argc, argv, "inspect", inspect_help, INSP_VIEW, &a);
    if (rc >= 0) return rc;
    insp_state s;
    if (insp_prepare(&a, "inspect", &s)) return 1;
    report_filter f = a.view;
    f.module = s.module;
    int *rows = malloc(sizeof *rows * (size_t)s.r->tree->n), cut = 0;
    if (!rows) {
        fprintf(stderr, "ait inspect: out of memory\n");
        insp_state_free(&s);
        return 1;
    }
    int n = report_rows(s.r, &f, rows, &cut);
    rc = 0;
    if (a.json) {
        json_w w = {.pretty = true};
        report_json(&w, s.r, &s.sel, rows, n);
        rc = cli_print_json(&w, "inspect");
    } else {
        printf("model %s: %d nodes, %d modules (%s)\n", a.model, s.m->g->n_nodes,
               s.r->tree->n - 1, s.r->tree->from_scopes ? "from scope names" : "fallback: segments of comparable FLOPs");
        printf("fusions found:");
        for (int k = 0; k < FK_N; k++)
            printf("%s %d %s", k ? "," : "", s.r->fusions[k], fuse_kind_name((fuse_kind)k));
        printf("\n");
        insp_print_table(stdout, &s, rows, n, cut);
        if (s.module >= 0) insp_print_spec(stdout, s.r, s.module);
    }
    free(rows);
    insp_state_free(&s);
    return rc;
}
