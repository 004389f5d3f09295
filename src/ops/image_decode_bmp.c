/* BMP (Windows and OS/2 bitmaps): 1, 2, 4 and 8 bits through a palette,
 * RLE4 and RLE8, 16 and 32 bits with or without bit fields, 24 bits;
 * bottom-up or top-down. Embedded JPEG/PNG bitmaps are not decoded. Every
 * pixel comes out RGB (gray bitmaps have equal channels); alpha is dropped. */
#include <string.h>

#include "ops/image_decode.h"

static uint32_t u16le(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t u32le(const uint8_t *p) { return u16le(p) | u16le(p + 2) << 16; }

enum { BI_RGB = 0, BI_RLE8 = 1, BI_RLE4 = 2, BI_BITFIELDS = 3, BI_ALPHABITFIELDS = 6 };

/* One colour channel held in a bit mask: its position and width. */
typedef struct field {
    int shift;
    uint32_t max; /* mask >> shift; 0 for an empty mask */
} field;

static field field_of(uint32_t mask)
{
    field f = {0, 0};
    if (!mask) return f;
    while (!(mask & 1)) mask >>= 1, f.shift++;
    f.max = mask;
    return f;
}

static uint8_t field_get(field f, uint32_t px)
{
    if (!f.max) return 0;
    uint64_t v = (px >> f.shift) & f.max;
    return (uint8_t)(v * 255 / f.max); /* truncated, as Pillow's 5-6-5 and 5-5-5 unpackers */
}

/* Pixel (x, y), y counted from the bottom, to palette entry idx; outside
 * the image (RLE deltas and runs may go there) nothing. */
static void rle_put(image *im, int64_t x, int64_t y, unsigned idx, const uint8_t pal[][3])
{
    if (x < im->w && y < im->h) memcpy(im->px + 3 * ((im->h - 1 - y) * im->w + x), pal[idx], 3);
}

/* RLE8 and RLE4 (bpp 8 or 4): runs of one index (RLE4: two alternating),
 * literal runs padded to 16 bits, and escapes for end of line, end of
 * bitmap and a jump. Pixels never written keep palette entry 0. */
static ait_status bmp_rle(const uint8_t *d, size_t n, size_t i, uint32_t bpp,
                          const uint8_t pal[][3], image *im, ait_error *e)
{
    for (int64_t k = 0; k < im->w * im->h; k++) memcpy(im->px + 3 * k, pal[0], 3);
    int64_t x = 0, y = 0;
    while (i + 2 <= n) {
        unsigned c = d[i], v = d[i + 1];
        i += 2;
        if (c > 0) { /* a run */
            for (unsigned j = 0; j < c; j++, x++)
                rle_put(im, x, y, bpp == 8 ? v : j & 1 ? v & 15 : v >> 4, pal);
        } else if (v == 0) { /* end of line */
            x = 0, y++;
        } else if (v == 1) { /* end of bitmap */
            return AIT_OK;
        } else if (v == 2) { /* jump right and up */
            if (i + 2 > n) break;
            x += d[i], y += d[i + 1];
            i += 2;
        } else { /* v literal indexes */
            size_t bytes = bpp == 8 ? v : (v + 1) / 2;
            if (n - i < bytes) break;
            for (unsigned j = 0; j < v; j++, x++)
                rle_put(im, x, y, bpp == 8 ? d[i + j] : j & 1 ? d[i + j / 2] & 15 : d[i + j / 2] >> 4,
                        pal);
            i += bytes + (bytes & 1);
        }
    }
    return err_set(e, AIT_E_PARSE, "RLE data is truncated (no end of bitmap)");
}

ait_status image_bmp(const uint8_t *d, size_t n, image *im, ait_error *e)
{
    if (n < 18) return err_set(e, AIT_E_PARSE, "truncated header");
    uint32_t off = u32le(d + 10), hsz = u32le(d + 14);
    int64_t w, h;
    uint32_t bpp, comp = BI_RGB, used = 0;
    int pal_entry = 4;
    if (hsz == 12) { /* OS/2 BITMAPCOREHEADER */
        if (n < 26) return err_set(e, AIT_E_PARSE, "truncated header");
        w = u16le(d + 18), h = u16le(d + 20), bpp = u16le(d + 24);
        pal_entry = 3;
    } else if (hsz >= 40 && hsz <= 124) {
        if (n < 14 + (size_t)hsz) return err_set(e, AIT_E_PARSE, "truncated header");
        w = (int32_t)u32le(d + 18), h = (int32_t)u32le(d + 22), bpp = u16le(d + 28);
        comp = u32le(d + 30), used = u32le(d + 46);
    } else {
        return err_set(e, AIT_E_PARSE, "unknown header size %u", hsz);
    }
    bool top_down = h < 0;
    if (top_down) h = -h;
    bool rle = comp == BI_RLE8 || comp == BI_RLE4;
    if (comp != BI_RGB && comp != BI_BITFIELDS && comp != BI_ALPHABITFIELDS && !rle)
        return err_set(e, AIT_E_PARSE, "compression %u is not supported", comp);
    if (rle && (bpp != (comp == BI_RLE8 ? 8u : 4u) || top_down))
        return err_set(e, AIT_E_PARSE, "RLE%u needs %u bits per pixel, bottom-up",
                       comp == BI_RLE8 ? 8 : 4, comp == BI_RLE8 ? 8 : 4);
    if (bpp != 1 && bpp != 2 && bpp != 4 && bpp != 8 && bpp != 16 && bpp != 24 && bpp != 32)
        return err_set(e, AIT_E_PARSE, "%u bits per pixel is not supported", bpp);
    if (comp != BI_RGB && !rle && bpp != 16 && bpp != 32)
        return err_set(e, AIT_E_PARSE, "bit fields need 16 or 32 bits per pixel, not %u", bpp);

    /* Bit masks: in the header from size 52 on, else just after a 40-byte one. */
    size_t pal_at = 14 + (size_t)hsz;
    field f[3];
    if (comp == BI_BITFIELDS || comp == BI_ALPHABITFIELDS) {
        size_t at = 54;
        if (hsz == 40) pal_at += comp == BI_ALPHABITFIELDS ? 16 : 12;
        if (n < at + 12) return err_set(e, AIT_E_PARSE, "truncated bit masks");
        for (int c = 0; c < 3; c++) f[c] = field_of(u32le(d + at + 4 * c));
    } else if (bpp == 16) {
        for (int c = 0; c < 3; c++) f[c] = field_of(0x1fu << (10 - 5 * c)); /* 5-5-5 */
    } else {
        for (int c = 0; c < 3; c++) f[c] = field_of(0xffu << (16 - 8 * c));
    }

    uint8_t pal[256][3];
    memset(pal, 0, sizeof pal);
    if (bpp <= 8) {
        uint32_t max = 1u << bpp;
        if (used == 0 || used > max) used = max;
        if (pal_at > n || (n - pal_at) / (size_t)pal_entry < used)
            return err_set(e, AIT_E_PARSE, "truncated palette");
        for (uint32_t i = 0; i < used; i++)
            for (int c = 0; c < 3; c++) pal[i][c] = d[pal_at + (size_t)pal_entry * i + 2 - c];
    }

    TRY(image_check(im, w, h, e));
    if (rle) {
        if (off > n) return err_set(e, AIT_E_PARSE, "pixel data is truncated");
        TRY(image_alloc(im, w, h, 3, e));
        return bmp_rle(d, n, off, bpp, (const uint8_t(*)[3])pal, im, e);
    }
    uint64_t stride = ((uint64_t)w * bpp + 31) / 32 * 4;
    if (off > n || (n - off) / stride < (uint64_t)h)
        return err_set(e, AIT_E_PARSE, "pixel data is truncated (%lld rows of %llu bytes at %u "
                       "in %zu bytes)", (long long)h, (unsigned long long)stride, off, n);
    TRY(image_alloc(im, w, h, 3, e));
    for (int64_t y = 0; y < h; y++) {
        const uint8_t *row = d + off + stride * (uint64_t)(top_down ? y : h - 1 - y);
        uint8_t *o = im->px + (size_t)(y * w * 3);
        for (int64_t x = 0; x < w; x++, o += 3) {
            if (bpp <= 8) {
                uint64_t bit = (uint64_t)x * bpp;
                unsigned idx = (row[bit / 8] >> (8 - bpp - bit % 8)) & ((1u << bpp) - 1);
                memcpy(o, pal[idx], 3);
            } else if (bpp == 24) {
                o[0] = row[3 * x + 2], o[1] = row[3 * x + 1], o[2] = row[3 * x];
            } else {
                uint32_t px = bpp == 16 ? u16le(row + 2 * x) : u32le(row + 4 * x);
                for (int c = 0; c < 3; c++) o[c] = field_get(f[c], px);
            }
        }
    }
    return AIT_OK;
}
