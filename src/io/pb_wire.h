/* Protocol buffers' wire format, the piece that the scanners of raw ONNX
 * bytes share (pb_depth.c's nesting check, onnx_strip.c's weight finder):
 * a base-128 varint. */
#ifndef AIT_IO_PB_WIRE_H
#define AIT_IO_PB_WIRE_H
#include <stdbool.h>
#include <stdint.h>

/* The varint at *p (before end) into *v, *p past it; false when it runs past
 * end or past 64 bits. */
static inline bool pb_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    uint64_t r = 0;
    for (int shift = 0; shift < 64 && *p < end; shift += 7) {
        uint8_t b = *(*p)++;
        r |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = r;
            return true;
        }
    }
    return false;
}
#endif
