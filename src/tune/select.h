/* Selection: which modules to tune, each with the strategy that picks its
 * candidate. Built from paths, from a minimum share of the model's time,
 * or as the top N modules by share; consumed by the tuner. */
#ifndef AIT_TUNE_SELECT_H
#define AIT_TUNE_SELECT_H
#include "tune/inspect.h"

#define SELECT_STRATEGY_MAX 64
#define SELECT_DEFAULT_STRATEGY "max-throughput"

typedef struct select_item {
    int module;                          /* index in the module tree */
    char strategy[SELECT_STRATEGY_MAX];
} select_item;

/* Modules never overlap: no selected module is inside another. */
typedef struct selection {
    int n, cap;
    select_item *items;
} selection;

/* Checks a strategy name: first-wins, one-backend:NAME, max-throughput,
 * min-latency, latency-budget:MS. On failure e says what is accepted. */
ait_status strategy_check(const char *name, ait_error *e);

/* Adds the modules matching `pattern`: an exact path, or a prefix ending in
 * '*' ("layer1.*", "encoder.layer.*"), of which only the outermost matches
 * are taken. strategy NULL means the default. Fails when nothing matches,
 * the strategy is unknown, or a match overlaps a module already selected
 * (a module is already selected with another strategy, its strategy is
 * replaced). */
ait_status select_path(selection *s, const module_tree *t, const char *pattern,
                       const char *strategy, ait_error *e);
/* The modules of the cut at `depth` (those at that depth, and leaves above
 * it; the root never), ordered by share, biggest first: those with at least
 * `min_share` (0..1) of the model's time, at most `top` of them (top <= 0:
 * no limit). Modules overlapping one already selected are passed over.
 * Adds nothing (and succeeds) when none qualifies. */
ait_status select_by_share(selection *s, const inspection *r, int depth, double min_share,
                           int top, const char *strategy, ait_error *e);
/* Position of module m in the selection, or -1. */
int select_find(const selection *s, int m);
void selection_clear(selection *s);

#endif
