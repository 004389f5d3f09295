/* Buffers placed in one arena by lifetime (see place.h). */
#include "exec/place.h"

#include <stdlib.h>

static int by_size(const void *a, const void *b)
{
    const place_item *p = a, *q = b;
    if (p->bytes != q->bytes) return p->bytes < q->bytes ? 1 : -1;
    return p->first - q->first;
}

static int by_off(const void *a, const void *b)
{
    const place_item *p = *(place_item *const *)a, *q = *(place_item *const *)b;
    return p->off < q->off ? -1 : p->off > q->off;
}

size_t place_items(place_item *it, int n, place_item **hit)
{
    size_t need = 0;
    qsort(it, (size_t)n, sizeof *it, by_size);
    for (int a = 0; a < n; a++) {
        int nh = 0;
        for (int b = 0; b < a; b++)
            if (it[b].first <= it[a].last && it[a].first <= it[b].last) hit[nh++] = &it[b];
        qsort(hit, (size_t)nh, sizeof *hit, by_off);
        int64_t at = 0;
        for (int h = 0; h < nh; h++) {
            if (at + (int64_t)it[a].bytes <= hit[h]->off) break;
            int64_t end = hit[h]->off + (int64_t)hit[h]->bytes;
            if (end > at) at = end;
        }
        it[a].off = at;
        if ((size_t)at + it[a].bytes > need) need = (size_t)at + it[a].bytes;
    }
    return need;
}
