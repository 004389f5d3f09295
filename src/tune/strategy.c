#include "tune/strategy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Names and whether an argument follows the ':'. */
static const struct {
    const char *name;
    strat_kind kind;
    bool arg;
} strat_table[] = {
    {"first-wins", STRAT_FIRST_WINS, false},
    {"one-backend", STRAT_ONE_BACKEND, true},
    {"max-throughput", STRAT_MAX_THROUGHPUT, false},
    {"min-latency", STRAT_MIN_LATENCY, false},
    {"latency-budget", STRAT_LATENCY_BUDGET, true},
    {"only", STRAT_ONLY, true},
};
#define N_STRAT (sizeof strat_table / sizeof strat_table[0])
#define STRAT_LIST \
    "first-wins, one-backend:NAME, max-throughput, min-latency, latency-budget:MS or only:NAME"

ait_status strategy_parse(const char *s, strategy *out, ait_error *e)
{
    if (!s) return err_set(e, AIT_E_INVALID_ARG, "no strategy given (expected " STRAT_LIST ")");
    const char *colon = strchr(s, ':');
    size_t len = colon ? (size_t)(colon - s) : strlen(s);
    for (size_t i = 0; i < N_STRAT; i++) {
        if (strlen(strat_table[i].name) != len || strncmp(s, strat_table[i].name, len)) continue;
        if (strat_table[i].arg && !colon)
            return err_set(e, AIT_E_INVALID_ARG, "strategy '%s' needs an argument: %s:%s", s,
                           s, strat_table[i].kind == STRAT_LATENCY_BUDGET ? "MS" : "NAME");
        if (!strat_table[i].arg && colon)
            return err_set(e, AIT_E_INVALID_ARG, "strategy '%s': %s takes no argument", s,
                           strat_table[i].name);
        *out = (strategy){.kind = strat_table[i].kind, .margin = STRAT_DEFAULT_MARGIN};
        const char *arg = colon ? colon + 1 : "";
        if (out->kind == STRAT_ONE_BACKEND || out->kind == STRAT_ONLY) {
            if (!*arg || strlen(arg) >= sizeof out->backend)
                return err_set(e, AIT_E_INVALID_ARG,
                               "strategy '%s': %s needs a backend name (1 to %zu characters)",
                               s, strat_table[i].name, sizeof out->backend - 1);
            strcpy(out->backend, arg);
        } else if (out->kind == STRAT_LATENCY_BUDGET) {
            char *end;
            out->budget_ms = strtod(arg, &end);
            if (!*arg || *end || !isfinite(out->budget_ms) || out->budget_ms <= 0)
                return err_set(e, AIT_E_INVALID_ARG,
                               "strategy '%s': latency-budget needs a positive number of "
                               "milliseconds (latency-budget:5)",
                               s);
        }
        return AIT_OK;
    }
    return err_set(e, AIT_E_INVALID_ARG, "unknown strategy '%s' (expected " STRAT_LIST ")", s);
}

bool strategy_speed(const char *s)
{
    strategy st;
    return strategy_parse(s, &st, NULL) == AIT_OK &&
           (st.kind == STRAT_MAX_THROUGHPUT || st.kind == STRAT_MIN_LATENCY);
}

const char *strategy_str(const strategy *s, char *buf, size_t n)
{
    const char *name = "?";
    for (size_t i = 0; i < N_STRAT; i++)
        if (strat_table[i].kind == s->kind) name = strat_table[i].name;
    if (s->kind == STRAT_ONE_BACKEND || s->kind == STRAT_ONLY)
        snprintf(buf, n, "%s:%s", name, s->backend);
    else if (s->kind == STRAT_LATENCY_BUDGET) snprintf(buf, n, "%s:%g", name, s->budget_ms);
    else snprintf(buf, n, "%s", name);
    return buf;
}

size_t strategy_name_backend(const char *name, const char **variant)
{
    const char *colon = strchr(name, ':');
    *variant = colon ? colon + 1 : NULL;
    return colon ? (size_t)(colon - name) : strlen(name);
}

bool strategy_names(const char *name, const char *backend, const char *variant)
{
    const char *want;
    size_t n = strategy_name_backend(name, &want);
    if (strlen(backend) != n || strncmp(backend, name, n)) return false;
    if (want && !strcmp(want, "default")) return !variant || !*variant;
    return !want || (*want && variant && !strcmp(variant, want));
}

static bool of_backend(const cand_result *c, const char *name)
{
    return strategy_names(name, c->backend ? c->backend : c->name, c->variant);
}

/* Whether a beats b on latency (or throughput) by the margin. */
static bool faster(const cand_result *a, const cand_result *b, double margin)
{
    return a->latency < b->latency * (1 - margin);
}
static bool more_thr(const cand_result *a, const cand_result *b, double margin)
{
    return a->throughput > b->throughput * (1 + margin);
}

/* The best valid candidate by throughput (thr) or latency, among those of
 * backend `only` (NULL: all) whose latency is at most `cap` seconds; -1 if
 * none. Strict comparisons keep the earlier of a tie. */
static int best_of(const cand_result *c, int n, bool thr, const char *only, double cap)
{
    int b = -1;
    for (int i = 0; i < n; i++) {
        if (!c[i].valid || (only && !of_backend(&c[i], only)) || c[i].latency > cap) continue;
        if (b < 0 || (thr ? c[i].throughput > c[b].throughput : c[i].latency < c[b].latency))
            b = i;
    }
    return b;
}

static double ms(double s) { return s * 1e3; }

/* The sentence for a candidate compared with the baseline on one metric. */
static void say(choice *out, bool chosen, const char *what, const cand_result *c,
                const cand_result *base, bool thr, double margin)
{
    if (chosen && thr)
        snprintf(out->why, sizeof out->why,
                 "%s chosen: %s, %.1f/s against the baseline's %.1f/s (%+.1f%%, margin %g%%)",
                 c->name, what, c->throughput, base->throughput,
                 100 * (c->throughput / base->throughput - 1), 100 * margin);
    else if (chosen)
        snprintf(out->why, sizeof out->why,
                 "%s chosen: %s, %.3f ms against the baseline's %.3f ms (%.1f%% faster, margin %g%%)",
                 c->name, what, ms(c->latency), ms(base->latency),
                 100 * (1 - c->latency / base->latency), 100 * margin);
    else if (thr)
        snprintf(out->why, sizeof out->why,
                 "kept the baseline (%.1f/s): %s, %s at %.1f/s, is not %g%% above it", base->throughput,
                 what, c->name, c->throughput, 100 * margin);
    else
        snprintf(out->why, sizeof out->why,
                 "kept the baseline (%.3f ms): %s, %s at %.3f ms, is not %g%% faster",
                 ms(base->latency), what, c->name, ms(c->latency), 100 * margin);
}

static ait_status choose_budget(const strategy *s, const cand_result *base, const cand_result *c,
                                int n, choice *out, ait_error *e)
{
    double cap = s->budget_ms * 1e-3;
    int b = best_of(c, n, true, NULL, cap);
    bool base_fits = base->latency <= cap;
    if (b < 0 && !base_fits) {
        int q = best_of(c, n, false, NULL, INFINITY);
        const cand_result *best = q >= 0 && c[q].latency < base->latency ? &c[q] : base;
        return err_set(e, AIT_E_NOT_FOUND,
                       "latency-budget:%g: nothing fits the budget of %g ms; the best latency is "
                       "%.3f ms (%s)",
                       s->budget_ms, s->budget_ms, ms(best->latency), best->name);
    }
    if (b < 0) {
        snprintf(out->why, sizeof out->why,
                 "kept the baseline (%.3f ms): no valid candidate fits the %g ms budget",
                 ms(base->latency), s->budget_ms);
    } else if (!base_fits) {
        out->index = b;
        snprintf(out->why, sizeof out->why,
                 "%s chosen: the highest throughput within the %g ms budget (%.3f ms, %.1f/s); "
                 "the baseline's %.3f ms does not fit",
                 c[b].name, s->budget_ms, ms(c[b].latency), c[b].throughput, ms(base->latency));
    } else {
        bool win = more_thr(&c[b], base, s->margin);
        if (win) out->index = b;
        say(out, win, "the highest throughput within the budget", &c[b], base, true, s->margin);
    }
    return AIT_OK;
}

static ait_status choose_first(const strategy *s, const cand_result *base, const cand_result *c,
                               int n, choice *out)
{
    for (int i = 0; i < n; i++)
        if (c[i].valid && faster(&c[i], base, s->margin)) {
            out->index = i;
            say(out, true, "the first valid candidate faster than the baseline", &c[i], base, false,
                s->margin);
            return AIT_OK;
        }
    int b = best_of(c, n, false, NULL, INFINITY);
    if (b >= 0) say(out, false, "the fastest valid candidate", &c[b], base, false, s->margin);
    return AIT_OK;
}

ait_status strategy_choose(const strategy *s, const cand_result *base, const cand_result *c, int n,
                           choice *out, ait_error *e)
{
    if (!s || !base || !out || n < 0 || (n && !c) || !(s->margin >= 0 && s->margin < 1))
        return err_set(e, AIT_E_INVALID_ARG, "strategy_choose: bad arguments (margin in [0, 1))");
    out->index = -1;
    snprintf(out->why, sizeof out->why, n ? "kept the baseline: no candidate is valid"
             : "kept the baseline: no backend but the reference runs any of its nodes");
    const char *only = NULL;
    if (s->kind == STRAT_ONE_BACKEND || s->kind == STRAT_ONLY) {
        only = s->backend;
        int k = 0;
        while (k < n && !of_backend(&c[k], only)) k++;
        if (k == n) { /* the backend runs none of this module's nodes */
            snprintf(out->why, sizeof out->why, "kept the baseline: backend '%s' has no "
                     "candidate for this module (it runs none of its nodes)", only);
            return AIT_OK;
        }
        snprintf(out->why, sizeof out->why, "kept the baseline: no candidate of %s is valid", only);
    }
    switch (s->kind) {
    case STRAT_FIRST_WINS: return choose_first(s, base, c, n, out);
    case STRAT_LATENCY_BUDGET: return choose_budget(s, base, c, n, out, e);
    default: break;
    }
    bool thr = s->kind == STRAT_MAX_THROUGHPUT;
    int b = best_of(c, n, thr, only, INFINITY);
    if (b < 0) return AIT_OK;
    if (s->kind == STRAT_ONLY) {
        out->index = b;
        snprintf(out->why, sizeof out->why,
                 "%s chosen: only:%s takes the backend's fastest valid candidate, %.3f ms, "
                 "whatever the baseline's %.3f ms",
                 c[b].name, only, ms(c[b].latency), ms(base->latency));
        return AIT_OK;
    }
    bool win = thr ? more_thr(&c[b], base, s->margin) : faster(&c[b], base, s->margin);
    if (win) out->index = b;
    const char *what = thr ? "the highest throughput"
                       : only ? "the fastest valid candidate of the backend"
                              : "the lowest latency";
    say(out, win, what, &c[b], base, thr, s->margin);
    return AIT_OK;
}
