/* Buffers placed in one arena by lifetime: the executor's intermediates
 * (exec.c) and a native module's values (backends/native) share it. */
#ifndef AIT_EXEC_PLACE_H
#define AIT_EXEC_PLACE_H
#include <stddef.h>
#include <stdint.h>

/* A buffer of `bytes` live from step `first` to step `last` (inclusive);
 * v is the caller's (a value id); off is the result. */
typedef struct place_item {
    int v, first, last;
    size_t bytes;
    int64_t off;
} place_item;

/* Places it[0..n) (reordering them: largest first), each at the lowest
 * offset clear of the items placed before it whose lifetimes overlap its
 * own (a step's inputs and outputs overlap at that step, so an output never
 * shares an input's bytes). hit: n pointers of work space. Allocates
 * nothing; returns the arena's bytes (the end of the highest item). */
size_t place_items(place_item *it, int n, place_item **hit);

#endif
