/* Selection of modules to tune. Selected modules never overlap, because
 * the tuner builds each selected module as one unit: a module and one of
 * its descendants cannot both be built. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune/select.h"
#include "tune/strategy.h"

/* Backends the design names; `one-backend:NAME` must pick one of them. */
static const char *const backends[] = {
    "reference", "native", "openblas", "onednn", "bf16", "fp16",
    "int8wo",    "int8dq", "int4wo",   "fp8wo",  "cuda",
};

ait_status strategy_check(const char *name, ait_error *e)
{
    strategy st;
    if (name && strlen(name) >= SELECT_STRATEGY_MAX)
        return err_set(e, AIT_E_INVALID_ARG, "strategy '%.40s...' is too long", name);
    TRY(strategy_parse(name, &st, e));
    if (st.kind != STRAT_ONE_BACKEND && st.kind != STRAT_ONLY) return AIT_OK;
    /* NAME is a backend, or BACKEND:VARIANT for one of its variants */
    const char *variant;
    size_t n = strategy_name_backend(st.backend, &variant);
    if (variant && !*variant)
        return err_set(e, AIT_E_INVALID_ARG,
                       "strategy '%s': '%s' names no variant (BACKEND:VARIANT, e.g. "
                       "only:native:int8wo)", name, st.backend);
    for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++)
        if (strlen(backends[i]) == n && !strncmp(st.backend, backends[i], n)) return AIT_OK;
    return err_set(e, AIT_E_INVALID_ARG,
                   "strategy '%s': unknown backend '%.*s' (backends: reference, native, "
                   "openblas, onednn, bf16, fp16, int8wo, int8dq, int4wo, fp8wo, cuda)",
                   name, (int)n, st.backend);
}

/* True when a is b or one of b's ancestors. */
static bool is_within(const module_tree *t, int b, int a)
{
    for (int m = b; m >= 0; m = t->mods[m].parent)
        if (m == a) return true;
    return false;
}

int select_find(const selection *s, int m)
{
    for (int i = 0; i < s->n; i++)
        if (s->items[i].module == m) return i;
    return -1;
}

/* The selected module that m overlaps (is inside of, or holds), or -1. */
static int overlap(const selection *s, const module_tree *t, int m)
{
    for (int i = 0; i < s->n; i++) {
        int o = s->items[i].module;
        if (is_within(t, m, o) || is_within(t, o, m)) return i;
    }
    return -1;
}

static ait_status add(selection *s, int m, const char *strategy, ait_error *e)
{
    int at = select_find(s, m);
    if (at < 0) {
        if (s->n == s->cap) {
            int cap = s->cap ? 2 * s->cap : 16;
            select_item *it = realloc(s->items, (size_t)cap * sizeof *it);
            if (!it) return err_set(e, AIT_E_NOMEM, "out of memory");
            s->items = it, s->cap = cap;
        }
        at = s->n++;
        s->items[at].module = m;
    }
    snprintf(s->items[at].strategy, sizeof s->items[at].strategy, "%s", strategy);
    return AIT_OK;
}

ait_status select_path(selection *s, const module_tree *t, const char *pattern,
                       const char *strategy, ait_error *e)
{
    if (!strategy) strategy = SELECT_DEFAULT_STRATEGY;
    TRY(strategy_check(strategy, e));
    if (!pattern || !*pattern) return err_set(e, AIT_E_INVALID_ARG, "empty module path");
    size_t len = strlen(pattern);
    bool prefix = pattern[len - 1] == '*';
    if (prefix) len--;
    if (memchr(pattern, '*', len))
        return err_set(e, AIT_E_INVALID_ARG,
                       "module pattern '%s': '*' may only end it ('layer1.*')", pattern);
    int found = 0;
    for (int m = 1; m < t->n; m++) {
        const char *name = t->mods[m].name;
        if (prefix ? strncmp(name, pattern, len) != 0 : strcmp(name, pattern) != 0) continue;
        /* only the outermost matches: an ancestor that matched covers m */
        bool covered = false;
        for (int a = t->mods[m].parent; prefix && a > 0; a = t->mods[a].parent)
            covered |= !strncmp(t->mods[a].name, pattern, len);
        if (covered) continue;
        found++;
        int o = overlap(s, t, m);
        if (o >= 0 && s->items[o].module != m)
            return err_set(e, AIT_E_INVALID_ARG,
                           "module '%s' overlaps '%s', already selected: a module and one "
                           "inside it cannot both be tuned", name,
                           t->mods[s->items[o].module].name);
        TRY(add(s, m, strategy, e));
    }
    if (!found)
        return err_set(e, AIT_E_NOT_FOUND,
                       "no module %s '%.*s' (`ait inspect MODEL` lists the module paths)",
                       prefix ? "path starts with" : "is called", (int)len, pattern);
    return AIT_OK;
}

/* Sorts module indices by share, biggest first, ties in tree order
 * (insertion sort: a tree has tens to hundreds of modules). */
static void sort_by_share(int *m, int n, const inspection *r)
{
    for (int i = 1; i < n; i++) {
        int v = m[i], j = i;
        for (; j > 0 && r->st[m[j - 1]].share < r->st[v].share; j--) m[j] = m[j - 1];
        m[j] = v;
    }
}

ait_status select_by_share(selection *s, const inspection *r, int depth, double min_share,
                           int top, const char *strategy, ait_error *e)
{
    if (!strategy) strategy = SELECT_DEFAULT_STRATEGY;
    TRY(strategy_check(strategy, e));
    if (depth < 1) return err_set(e, AIT_E_INVALID_ARG, "selection depth must be 1 or more");
    const module_tree *t = r->tree;
    int *cand = malloc((size_t)t->n * sizeof *cand), n = 0;
    if (!cand) return err_set(e, AIT_E_NOMEM, "out of memory");
    for (int m = 1; m < t->n; m++) {
        const module *md = &t->mods[m];
        if (md->depth == depth || (md->depth < depth && md->n_children == 0)) cand[n++] = m;
    }
    sort_by_share(cand, n, r);
    ait_status st = AIT_OK;
    for (int i = 0, taken = 0; i < n && (top <= 0 || taken < top); i++) {
        if (r->st[cand[i]].share < min_share) break;
        if (overlap(s, t, cand[i]) >= 0) continue;
        if ((st = add(s, cand[i], strategy, e)) != AIT_OK) break;
        taken++;
    }
    free(cand);
    return st;
}

void selection_clear(selection *s)
{
    free(s->items);
    *s = (selection){0};
}
