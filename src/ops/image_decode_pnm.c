/* Netpbm images: PBM, PGM and PPM, plain (P1-P3) and raw (P4-P6), and PAM
 * (P7) with 1 to 4 channels. Samples above 8 bits (maxval > 255) and below
 * are scaled to 0..255 with rounding; PAM's alpha is dropped. */
#include <string.h>

#include "ops/image_decode.h"

typedef struct scan {
    const uint8_t *d;
    size_t n, i;
} scan;

static bool is_space(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

/* Skips white space and '#' comments (which run to the end of the line). */
static void skip_space(scan *s)
{
    while (s->i < s->n) {
        if (s->d[s->i] == '#')
            while (s->i < s->n && s->d[s->i] != '\n') s->i++;
        else if (is_space(s->d[s->i]))
            s->i++;
        else
            break;
    }
}

/* A decimal number of at most `max`; false if there is none or it is larger. */
static bool number(scan *s, int64_t max, int64_t *v)
{
    skip_space(s);
    if (s->i >= s->n || s->d[s->i] < '0' || s->d[s->i] > '9') return false;
    int64_t x = 0;
    while (s->i < s->n && s->d[s->i] >= '0' && s->d[s->i] <= '9') {
        x = x * 10 + (s->d[s->i++] - '0');
        if (x > max) return false;
    }
    *v = x;
    return true;
}

/* The PAM header after "P7": WIDTH, HEIGHT, DEPTH, MAXVAL, TUPLTYPE lines up to ENDHDR. */
static ait_status pam_header(scan *s, int64_t *w, int64_t *h, int64_t *depth, int64_t *maxval,
                             ait_error *e)
{
    static const char *const keys[] = {"WIDTH", "HEIGHT", "DEPTH", "MAXVAL"};
    int64_t *vals[] = {w, h, depth, maxval};
    *w = *h = *depth = *maxval = -1;
    for (;;) {
        skip_space(s);
        size_t start = s->i;
        while (s->i < s->n && !is_space(s->d[s->i])) s->i++;
        size_t len = s->i - start;
        const char *word = (const char *)s->d + start;
        if (len == 0) return err_set(e, AIT_E_PARSE, "PAM header has no ENDHDR");
        if (len == 6 && memcmp(word, "ENDHDR", 6) == 0) break;
        if (len == 8 && memcmp(word, "TUPLTYPE", 8) == 0) { /* its value: the rest of the line */
            while (s->i < s->n && s->d[s->i] != '\n') s->i++;
            continue;
        }
        int k = 0;
        while (k < 4 && !(strlen(keys[k]) == len && memcmp(word, keys[k], len) == 0)) k++;
        if (k == 4) return err_set(e, AIT_E_PARSE, "unknown PAM header line");
        if (!number(s, INT32_MAX, vals[k]))
            return err_set(e, AIT_E_PARSE, "PAM %s is not a number", keys[k]);
    }
    if (*w < 0 || *h < 0 || *depth < 1 || *depth > 4 || *maxval < 1)
        return err_set(e, AIT_E_PARSE, "PAM header lacks WIDTH, HEIGHT, DEPTH (1-4) or MAXVAL");
    return AIT_OK;
}

ait_status image_pnm(const uint8_t *d, size_t n, image *im, ait_error *e)
{
    scan s = {d, n, 2};
    int kind = d[1] - '0';
    int64_t w, h, maxval = 1, depth = kind == 3 || kind == 6 ? 3 : 1;
    if (kind == 7) {
        TRY(pam_header(&s, &w, &h, &depth, &maxval, e));
    } else {
        if (!number(&s, INT32_MAX, &w) || !number(&s, INT32_MAX, &h))
            return err_set(e, AIT_E_PARSE, "header has no width and height");
        if (kind != 1 && kind != 4 && !number(&s, 65535, &maxval))
            return err_set(e, AIT_E_PARSE, "header has no maximum value up to 65535");
    }
    if (maxval < 1 || maxval > 65535)
        return err_set(e, AIT_E_PARSE, "maximum value %lld is outside 1..65535", (long long)maxval);
    int out_ch = depth >= 3 ? 3 : 1;
    TRY(image_check(im, w, h, e));
    bool plain = kind <= 3;
    if (!plain) { /* one white-space byte ends the header */
        if (s.i >= n || !is_space(d[s.i])) return err_set(e, AIT_E_PARSE, "header is not ended");
        s.i++;
    }
    int bytes = maxval > 255 ? 2 : 1;
    uint64_t row_bytes = kind == 4 ? ((uint64_t)w + 7) / 8 : (uint64_t)w * depth * bytes;
    if (!plain && (n - s.i) / row_bytes < (uint64_t)h)
        return err_set(e, AIT_E_PARSE, "pixel data is truncated");
    TRY(image_alloc(im, w, h, out_ch, e));
    for (int64_t y = 0; y < h; y++) {
        const uint8_t *row = d + s.i + (plain ? 0 : row_bytes * (uint64_t)y);
        uint8_t *o = im->px + (size_t)(y * w * out_ch);
        for (int64_t x = 0; x < w; x++, o += out_ch) {
            for (int64_t c = 0; c < depth; c++) {
                int64_t v;
                if (kind == 4) {
                    v = !((row[x / 8] >> (7 - x % 8)) & 1); /* 1 is black */
                } else if (kind == 1) {
                    skip_space(&s);
                    if (s.i >= n || (d[s.i] != '0' && d[s.i] != '1'))
                        return err_set(e, AIT_E_PARSE, "pixel data is truncated");
                    v = d[s.i++] == '0';
                } else if (plain) {
                    if (!number(&s, maxval, &v))
                        return err_set(e, AIT_E_PARSE, "pixel data is truncated or over the "
                                       "maximum value");
                } else {
                    const uint8_t *p = row + (size_t)(x * depth + c) * bytes;
                    v = bytes == 2 ? (p[0] << 8 | p[1]) : p[0];
                    if (v > maxval) v = maxval;
                }
                if (c < out_ch) o[c] = (uint8_t)((v * 255 + maxval / 2) / maxval);
            }
        }
    }
    return AIT_OK;
}
