/* The order `ait gemm tune` takes its shapes in and the queue its --mp
 * processes share. A shape's tune costs from milliseconds (M = 1, N 256)
 * to tens of seconds (GPT-2's LM head, N 50257: B of 154 MB packed in
 * every candidate's child, a float64 reference over 64 rows); handed out
 * statically (shape i to process i % mp) the dear ones met in one process
 * and the other waited at the end. So the shapes are ordered dearest first
 * by an estimate (gt_cost) and each process takes the next one from a
 * counter they share when it is free (longest processing time first: the
 * processes end within about the last shape's cost of each other). */
#ifndef AIT_GEMMTUNE_QUEUE_H
#define AIT_GEMMTUNE_QUEUE_H
#include "gemmtune/tune.h"

/* An estimate of the seconds row r's tune takes under o: per candidate
 * (ncand of them, the libraries and the duel included) a child's start,
 * B packed and (warmup + iters) runs of the GEMM at a rate from its
 * FLOPs and bytes; and the float64 reference of up to 64 rows. Only
 * its order matters. */
double gt_cost(const gt_row *r, const gt_opts *o, int ncand);

/* Sorts db's rows by gt_cost (ncand from gt_candidate_count), the dearest
 * first; equal costs keep their order. */
ait_status gt_order(gt_db *db, const gt_opts *o, ait_error *e);

/* A counter shared by the processes forked after gt_queue_open (an
 * anonymous shared mapping): gt_queue_take hands out 0, 1, ..., n-1 once
 * each across them all, then -1. Each process's busy time and shapes go
 * into its own slot for the parent's summary. */
typedef struct gt_queue_slot {
    int shapes;
    double wall, cpu; /* seconds from the queue's start to its last shape's end; its CPU time, children's too */
} gt_queue_slot;

typedef struct gt_queue {
    int n, procs;
    void *map; /* the next index, then procs slots */
    size_t size;
} gt_queue;

ait_status gt_queue_open(gt_queue *q, int n, int procs, ait_error *e);
int gt_queue_take(gt_queue *q);
gt_queue_slot *gt_queue_slot_at(gt_queue *q, int w);
void gt_queue_close(gt_queue *q);

/* This process's wall clock and CPU time (its own and its waited-for
 * children's: a tune's candidates run in children), in seconds. */
void gt_usage(double *wall, double *cpu);

#endif
