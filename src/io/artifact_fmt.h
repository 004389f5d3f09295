/* Private to artifact_write.c and artifact_read.c: the header's field
 * offsets, little-endian accessors and the canonical layout both sides
 * compute from the lengths alone. */
#ifndef AIT_IO_ARTIFACT_FMT_H
#define AIT_IO_ARTIFACT_FMT_H
#include <stdint.h>
#include <string.h>

#include "io/artifact.h"

enum {
    H_MAGIC = 0, H_FORMAT = 8, H_HSIZE = 12, H_VERSION = 16, H_CPU = 48, H_MODEL = 272,
    H_MAN_OFF = 352, H_MAN_LEN = 360, H_MAN_SHA = 368, H_TAB_OFF = 400, H_COUNT = 408,
    H_FSIZE = 416, H_TAB_SHA = 424, H_RESERVED = 456, H_SUM = 480,
    E_NAME = 0, E_OFF = 208, E_LEN = 216, E_SHA = 224,
};

static inline void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static inline void put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint32_t get_u32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static inline uint64_t get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

/* *r = x rounded up to a multiple of a (a power of two); 0 on overflow. */
static inline int align_up(uint64_t x, uint64_t a, uint64_t *r)
{
    if (x > UINT64_MAX - (a - 1)) return 0;
    *r = (x + a - 1) & ~(a - 1);
    return 1;
}

/* *r = x + y; 0 on overflow. */
static inline int add_u64(uint64_t x, uint64_t y, uint64_t *r)
{
    if (x > UINT64_MAX - y) return 0;
    *r = x + y;
    return 1;
}

/* Where the blob table starts, for a manifest of man_len bytes; 0 on overflow. */
static inline int layout_table(uint64_t man_len, uint64_t *tab_off)
{
    uint64_t end;
    return add_u64(ARTIFACT_HEADER_SIZE, man_len, &end) && align_up(end, 8, tab_off);
}

#endif
