/* A pool of memory blocks made and touched once, lent to tensors and given
 * back when they are freed: a session's output copies (ait_session_run)
 * come from memory whose pages are already mapped, whatever the
 * allocator's policy (its mmap threshold, its trimming), so a first run
 * pays no page faults for them (issue 16).
 *
 * A tensor whose owned data is a block of a pool names it (tensor.pool);
 * tensor_release and tensor_alloc give the block back instead of freeing
 * it. The pool lives while its owner holds it or any block is lent: the
 * owner's block_pool_close frees the idle blocks, and each block given back
 * after that is freed, the last one freeing the pool. Take and give may
 * be called from any thread (a mutex, held for a scan of the blocks). */
#ifndef AIT_CORE_BLOCK_POOL_H
#define AIT_CORE_BLOCK_POOL_H
#include <stddef.h>

typedef struct block_pool block_pool;

/* A pool of n blocks of bytes[i] each (aligned_zalloc: 64-byte aligned,
 * zeroed so that their pages are mapped), 0 sizes and those over max_block
 * left out, then sizes taken in order while the total stays at most
 * max_total. NULL when no block is made (none asked, or no memory: the
 * pool is an optimisation, never a failure). */
block_pool *block_pool_new(const size_t *bytes, size_t n, size_t max_block, size_t max_total);
/* The smallest idle block of at least `need` bytes (its size in *cap), or
 * NULL (p NULL, closed, or none fits: the caller allocates). */
void *block_pool_take(block_pool *p, size_t need, size_t *cap);
/* Gives back block `data` taken from p (after p's close: frees it). */
void block_pool_give(block_pool *p, void *data);
/* The owner's release: idle blocks freed now, lent ones when given back. */
void block_pool_close(block_pool *p);

#endif
