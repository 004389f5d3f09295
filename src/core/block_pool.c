/* The pool of touched blocks (block_pool.h). */
#include "core/block_pool.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "core/tensor.h"

typedef struct blk {
    void *data;
    size_t bytes;
    bool lent;
} blk;

struct block_pool {
    pthread_mutex_t lock; /* guards every field below */
    blk *b;               /* by size, ascending: the first idle fit is the smallest */
    size_t n, lent;
    bool closed;          /* the owner let go: blocks given back are freed */
};

static int by_bytes(const void *x, const void *y)
{
    size_t a = ((const blk *)x)->bytes, b = ((const blk *)y)->bytes;
    return (a > b) - (a < b);
}

static void pool_free(block_pool *p)
{
    for (size_t i = 0; i < p->n; i++) aligned_free(p->b[i].data);
    free(p->b);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

block_pool *block_pool_new(const size_t *bytes, size_t n, size_t max_block, size_t max_total)
{
    block_pool *p = n ? calloc(1, sizeof *p) : NULL;
    if (!p) return NULL;
    if (!(p->b = calloc(n, sizeof *p->b)) || pthread_mutex_init(&p->lock, NULL) != 0) {
        free(p->b);
        free(p);
        return NULL;
    }
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        if (!bytes[i] || bytes[i] > max_block || bytes[i] > max_total - total) continue;
        void *d = aligned_zalloc(bytes[i]); /* zeroed: every page mapped now */
        if (!d) break;
        p->b[p->n++] = (blk){d, bytes[i], false};
        total += bytes[i];
    }
    if (!p->n) {
        pool_free(p);
        return NULL;
    }
    qsort(p->b, p->n, sizeof *p->b, by_bytes);
    return p;
}

void *block_pool_take(block_pool *p, size_t need, size_t *cap)
{
    if (!p) return NULL;
    void *d = NULL;
    pthread_mutex_lock(&p->lock);
    for (size_t i = 0; !p->closed && i < p->n; i++)
        if (!p->b[i].lent && p->b[i].bytes >= need) {
            p->b[i].lent = true;
            p->lent++;
            d = p->b[i].data;
            *cap = p->b[i].bytes;
            break;
        }
    pthread_mutex_unlock(&p->lock);
    return d;
}

void block_pool_give(block_pool *p, void *data)
{
    pthread_mutex_lock(&p->lock);
    size_t i = 0;
    while (i < p->n && p->b[i].data != data) i++;
    if (i < p->n) { /* always: only p's blocks are given back */
        p->b[i].lent = false;
        p->lent--;
        if (p->closed) aligned_free(data), p->b[i].data = NULL;
    }
    bool last = p->closed && !p->lent;
    pthread_mutex_unlock(&p->lock);
    if (last) pool_free(p);
}

void block_pool_close(block_pool *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->lock);
    p->closed = true;
    for (size_t i = 0; i < p->n; i++)
        if (!p->b[i].lent) aligned_free(p->b[i].data), p->b[i].data = NULL;
    bool last = !p->lent;
    pthread_mutex_unlock(&p->lock);
    if (last) pool_free(p);
}
