/* The tune's order and its processes' shared queue (queue.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

#include "core/timer.h"
#include "gemmtune/queue.h"

/* Rough rates of this kind of host, one core: only the order matters.
 * Calibrated on the Ice Lake-SP host from the per-shape times --mp logs
 * (bench/RESULTS.md, issue 15, branch gdb3). */
#define CHILD_S 2e-3      /* a candidate's child: fork, pipes, the wait */
#define FLOPS 60e9        /* a GEMM's float32 rate */
#define BYTES 8e9         /* and its operands' bytes per second */
#define PACK_BYTES 2e9    /* B packed in the child, per byte */
#define REF_TERM 1.2e-9   /* one term of the float64 reference */

double gt_cost(const gt_row *r, const gt_opts *o, int ncand)
{
    double m = (double)r->m, n = (double)r->n, k = (double)r->k;
    double flop = 2 * m * n * k, bytes = 4 * (m * k + k * n + m * n);
    double run = flop / FLOPS > bytes / BYTES ? flop / FLOPS : bytes / BYTES;
    int runs = (o->warmup > 0 ? o->warmup : 2) + (o->iters > 0 ? o->iters : 10);
    double pack = r->layout[1] == 'p' || strcmp(r->dtype, "f32") ? 4 * k * n / PACK_BYTES : 0;
    /* C faulted in per child: a page a microsecond */
    double fault = m * n * 4 / 4096 * 1e-6;
    double rows = m < 64 ? m : 64;
    return ncand * (CHILD_S + pack + fault + runs * run) + rows * n * k * REF_TERM;
}

typedef struct keyed {
    double cost;
    int at;
} keyed;

static int by_cost(const void *x, const void *y)
{
    const keyed *a = x, *b = y;
    if (a->cost != b->cost) return a->cost > b->cost ? -1 : 1;
    return a->at - b->at;
}

ait_status gt_order(gt_db *db, const gt_opts *o, ait_error *e)
{
    if (db->n < 2) return AIT_OK;
    keyed *ks = malloc(sizeof *ks * (size_t)db->n);
    gt_row *rows = malloc(sizeof *rows * (size_t)db->n);
    if (!ks || !rows) {
        free(ks);
        free(rows);
        return err_set(e, AIT_E_NOMEM, "out of memory ordering %d GEMM shapes", db->n);
    }
    for (int i = 0; i < db->n; i++)
        ks[i] = (keyed){gt_cost(&db->rows[i], o, gt_candidate_count(&db->rows[i], o)), i};
    qsort(ks, (size_t)db->n, sizeof *ks, by_cost);
    for (int i = 0; i < db->n; i++) rows[i] = db->rows[ks[i].at];
    memcpy(db->rows, rows, sizeof *rows * (size_t)db->n);
    free(ks);
    free(rows);
    return AIT_OK;
}

ait_status gt_queue_open(gt_queue *q, int n, int procs, ait_error *e)
{
    *q = (gt_queue){.n = n, .procs = procs};
    q->size = 64 + sizeof(gt_queue_slot) * (size_t)(procs > 0 ? procs : 1);
    q->map = mmap(NULL, q->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (q->map == MAP_FAILED) {
        q->map = NULL;
        return err_set(e, AIT_E_NOMEM, "a queue shared by %d processes: mmap: %s", procs, strerror(errno));
    }
    memset(q->map, 0, q->size);
    return AIT_OK;
}

int gt_queue_take(gt_queue *q)
{
    int i = __atomic_fetch_add((int *)q->map, 1, __ATOMIC_RELAXED);
    return i < q->n ? i : -1;
}

gt_queue_slot *gt_queue_slot_at(gt_queue *q, int w)
{
    return (gt_queue_slot *)((char *)q->map + 64) + w;
}

void gt_queue_close(gt_queue *q)
{
    if (q->map) munmap(q->map, q->size);
    q->map = NULL;
}

void gt_usage(double *wall, double *cpu)
{
    *wall = now_sec();
    struct rusage self, kids;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &kids);
    *cpu = (double)(self.ru_utime.tv_sec + self.ru_stime.tv_sec + kids.ru_utime.tv_sec + kids.ru_stime.tv_sec) +
           (double)(self.ru_utime.tv_usec + self.ru_stime.tv_usec + kids.ru_utime.tv_usec + kids.ru_stime.tv_usec) *
               1e-6;
}
