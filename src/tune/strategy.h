/* Strategies: which measured candidate a module keeps. Every strategy
 * compares with the eager baseline and keeps it unless a candidate beats it
 * by the margin (design.md, Tuning). */
#ifndef AIT_TUNE_STRATEGY_H
#define AIT_TUNE_STRATEGY_H
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/status.h"

/* One candidate's (or the baseline's) outcome. Strings are borrowed from
 * the caller and must outlive the call. */
typedef struct cand_result {
    const char *name;    /* "openblas/t1": shown in the reason */
    const char *backend; /* matched by one-backend:NAME; NULL: name is matched */
    bool valid;          /* passed validation (and did not crash) */
    const char *reason;  /* why not valid; may be NULL */
    double latency;      /* median latency, seconds */
    double throughput;   /* items per second */
    int64_t batch;
    const char *variant; /* the backend's variant ("int8wo"); NULL or "": its default */
} cand_result;

typedef enum strat_kind {
    STRAT_FIRST_WINS = 0, /* the first valid candidate in order faster than the baseline */
    STRAT_ONE_BACKEND,    /* the fastest valid candidate of one backend */
    STRAT_MAX_THROUGHPUT, /* the highest throughput */
    STRAT_MIN_LATENCY,    /* the lowest median latency */
    STRAT_LATENCY_BUDGET, /* the highest throughput whose latency fits the budget */
    STRAT_ONLY,           /* the fastest valid candidate of one backend, even when the baseline
                           * is faster: "the model on this backend alone", to compare with */
} strat_kind;

#define STRAT_DEFAULT_MARGIN 0.01

typedef struct strategy {
    strat_kind kind;
    char backend[64]; /* STRAT_ONE_BACKEND, STRAT_ONLY */
    double budget_ms; /* STRAT_LATENCY_BUDGET */
    /* A candidate must be this fraction faster (latency below
     * (1 - margin) x the baseline's, or throughput above (1 + margin) x)
     * to replace the baseline. Default STRAT_DEFAULT_MARGIN; settable. */
    double margin;
} strategy;

/* The backend part of a one-backend:NAME or only:NAME name: its length, and
 * *variant the text after "BACKEND:" ("" for "native:"), NULL for a backend
 * alone. */
size_t strategy_name_backend(const char *name, const char **variant);
/* Whether a candidate of backend `backend`, variant `variant` (NULL or "":
 * the default), is one that one-backend:NAME and only:NAME name: NAME is a
 * backend ("native": any of its variants) or a backend and one variant
 * ("native:int8wo": that variant alone, "native:default" the default alone,
 * "native:" never matches). */
bool strategy_names(const char *name, const char *backend, const char *variant);

/* Parses "first-wins", "one-backend:NAME", "max-throughput", "min-latency",
 * "latency-budget:MS" (MS a positive number of milliseconds) or "only:NAME" into *out,
 * with the default margin. Errors (AIT_E_INVALID_ARG) quote the bad string
 * and list the strategies. */
ait_status strategy_parse(const char *s, strategy *out, ait_error *e);
/* Whether the strategy named s picks the fastest candidate (max-throughput,
 * min-latency): the ones the whole-plan check may second-guess and whose
 * losers may stop profiling early. */
bool strategy_speed(const char *s);
/* Formats s back to its string form into buf (size n); returns buf. */
const char *strategy_str(const strategy *s, char *buf, size_t n);

typedef struct choice {
    int index;      /* the chosen candidate, or -1 for the baseline */
    char why[512];  /* one sentence saying why */
} choice;

/* Applies s to candidates c[0..n) and the baseline *base (its latency and
 * throughput measured; its valid flag is not consulted). Invalid candidates
 * are never chosen. Returns AIT_OK with *out filled, or:
 *   latency-budget:MS when neither a valid candidate nor the baseline fits:
 *     AIT_E_NOT_FOUND naming the budget and the best latency seen;
 *   bad arguments: AIT_E_INVALID_ARG.
 * one-backend:NAME and only:NAME with no valid candidate of NAME (the backend
 * runs none of the module's nodes, or failed) keep the baseline and say so:
 * "the whole model on NAME" means every module NAME can run. only:NAME
 * ignores the baseline's time and the margin. Unknown names are refused
 * earlier (strategy_check).
 * Ties go to the earlier candidate. Nothing is allocated. */
ait_status strategy_choose(const strategy *s, const cand_result *base, const cand_result *c, int n,
                           choice *out, ait_error *e);

#endif
