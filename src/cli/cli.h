/* The `ait` command: one file per subcommand. */
#ifndef AIT_CLI_H
#define AIT_CLI_H
#include "ait.h"
#include "core/log.h"
#include "core/timer.h"
#include "io/json.h"
#include "runtime/model.h"

int cmd_run(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_tune(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_generate(int argc, char **argv);
int cmd_gemm(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_sign(int argc, char **argv);
int cmd_keygen(int argc, char **argv);

/* The library's messages on stderr, as `ait` shows them: on a terminal,
 * PROGRESS as one status line redrawn in place and ERROR to INFO as lines
 * (DEBUG dropped: the status line shows each candidate); elsewhere (a log
 * file, a pipe) ERROR to DEBUG as lines and no PROGRESS. WARN and ERROR
 * lines start "ait: warning: " and "ait: error: ". */
logger cli_logger(void);
/* DEBUG lines on a terminal too (a command's -v). */
void cli_log_verbose(void);

/* Usage errors (usage.c): "ait CMD: MESSAGE (see ait CMD --help)" on one
 * line to stderr; each returns 2, the exit code of a usage error.
 * cli_bad_option takes getopt_long's ':' or '?' (run it with opterr = 0
 * and ':' first in the short options); cli_one_model checks that argv[first]
 * is the one positional argument (returns -1 when it is). */
/* args.c: a whole decimal integer in [lo, hi] (false: not one, *v kept);
 * qsort's order of doubles. */
bool cli_parse_int(const char *s, long long lo, long long hi, long long *v);
int cli_cmp_double(const void *a, const void *b);
/* Finishes w and prints the document on stdout: 0, or 1 with the reason on
 * stderr ("ait CMD: ..."). */
int cli_print_json(json_w *w, const char *cmd);

int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int cli_bad_option(const char *cmd, int c, char *const *argv);
int cli_one_model(const char *cmd, int argc, char *const *argv, int first);

/* --max-input-mb N: at most this many MiB (1 TiB). */
#define CLI_MAX_INPUT_MB (1 << 20)

/* Model inputs for a run: from files (--input NAME=FILE.npy or FILE.npz)
 * and, for the rest, generated from the declared dims. */
typedef struct input_opts {
    int batch;          /* size for dims named like a batch, and unnamed first dims */
    int n_dims;
    char *dim_names[32];
    int64_t dim_vals[32];
    int n_files;
    char *file_specs[64]; /* "NAME=FILE.npy" or "FILE.npz" */
    uint64_t seed;
    size_t max_input; /* --max-input-mb, in bytes: the most one array read may declare (0: no limit) */
} input_opts;

/* Fills tensors[i] for every model input, generated[i] saying whether it
 * was generated; prints what it generated. A --dim naming no dim of the
 * model's inputs is an error. */
ait_status inputs_make(const ait_model *m, const input_opts *o, ait_tensor **tensors,
                       bool *generated, ait_error *e);
/* After a run on those inputs failed: appends to e's message the dims of
 * generated inputs that nobody set, and how to set them (--dim). */
void inputs_explain(const ait_model *m, const input_opts *o, const bool *generated, ait_error *e);

#endif
