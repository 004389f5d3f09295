/* TIFF (and BigTIFF) through libtiff's RGBA interface, which handles every
 * photometric interpretation, bit depth and compression libtiff knows. The
 * first image of the file, oriented top-left; alpha dropped. libtiff reads
 * through the procedures below, which stay inside the buffer; its errors
 * and warnings go to handlers of this file only (not libtiff's globals). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tiffio.h>

#include "ops/image_decode.h"

typedef struct src {
    const uint8_t *d;
    size_t n, at;
    char msg[160];
} src;

static tmsize_t on_read(thandle_t h, void *out, tmsize_t len)
{
    src *s = h;
    if (len < 0) return -1;
    size_t k = (size_t)len < s->n - s->at ? (size_t)len : s->n - s->at;
    memcpy(out, s->d + s->at, k);
    s->at += k;
    return (tmsize_t)k;
}

static tmsize_t on_write(thandle_t h, void *in, tmsize_t len) { return -1; }

static toff_t on_seek(thandle_t h, toff_t off, int whence)
{
    src *s = h;
    uint64_t base = whence == SEEK_CUR ? s->at : whence == SEEK_END ? s->n : 0;
    if (off > UINT64_MAX - base || base + off > s->n) return (toff_t)-1;
    s->at = (size_t)(base + off);
    return s->at;
}

static int on_close(thandle_t h) { return 0; }
static toff_t on_size(thandle_t h) { return ((src *)h)->n; }
static int on_map(thandle_t h, void **base, toff_t *size) { return 0; }
static void on_unmap(thandle_t h, void *base, toff_t size) {}

/* Keeps the first error; returning 1 keeps libtiff's global handlers quiet. */
static int on_error(TIFF *t, void *user, const char *module, const char *fmt, va_list ap)
{
    src *s = user;
    if (!s->msg[0]) vsnprintf(s->msg, sizeof s->msg, fmt, ap);
    return 1;
}

static int on_warning(TIFF *t, void *user, const char *module, const char *fmt, va_list ap)
{
    return 1;
}

static ait_status read_rgba(TIFF *t, src *s, image *im, ait_error *e)
{
    uint32_t w = 0, h = 0;
    TIFFGetField(t, TIFFTAG_IMAGEWIDTH, &w);
    TIFFGetField(t, TIFFTAG_IMAGELENGTH, &h);
    /* Unassociated alpha would be multiplied into the colours; marked
     * associated, the colours are read as stored (and alpha dropped). */
    uint16_t n_extra = 0, *extra = NULL;
    if (TIFFGetField(t, TIFFTAG_EXTRASAMPLES, &n_extra, &extra) && n_extra == 1 &&
        extra[0] == EXTRASAMPLE_UNASSALPHA) {
        uint16_t assoc[1] = {EXTRASAMPLE_ASSOCALPHA};
        TIFFSetField(t, TIFFTAG_EXTRASAMPLES, 1, assoc);
    }
    char why[1024];
    if (!TIFFRGBAImageOK(t, why)) return err_set(e, AIT_E_PARSE, "%s", why);
    TRY(image_alloc(im, w, h, 3, e));
    uint32_t *rgba = malloc((size_t)w * h * sizeof *rgba);
    if (!rgba) return err_set(e, AIT_E_NOMEM, "out of memory for a %ux%u image", w, h);
    if (!TIFFReadRGBAImageOriented(t, w, h, rgba, ORIENTATION_TOPLEFT, 1)) {
        free(rgba);
        return err_set(e, AIT_E_PARSE, "%s", s->msg[0] ? s->msg : "cannot read the pixels");
    }
    for (size_t i = 0; i < (size_t)w * h; i++) {
        im->px[3 * i] = (uint8_t)TIFFGetR(rgba[i]);
        im->px[3 * i + 1] = (uint8_t)TIFFGetG(rgba[i]);
        im->px[3 * i + 2] = (uint8_t)TIFFGetB(rgba[i]);
    }
    free(rgba);
    return AIT_OK;
}

ait_status image_tiff(const uint8_t *d, size_t n, image *im, ait_error *e)
{
    src s = {d, n, 0, ""};
    TIFFOpenOptions *o = TIFFOpenOptionsAlloc();
    if (!o) return err_set(e, AIT_E_NOMEM, "out of memory");
    TIFFOpenOptionsSetErrorHandlerExtR(o, on_error, &s);
    TIFFOpenOptionsSetWarningHandlerExtR(o, on_warning, &s);
    TIFFOpenOptionsSetMaxSingleMemAlloc(o, (tmsize_t)im->max_pixels * 4);
    /* "m": no memory mapping (the procedures read the buffer) */
    TIFF *t = TIFFClientOpenExt("image", "rm", &s, on_read, on_write, on_seek, on_close,
                                on_size, on_map, on_unmap, o);
    TIFFOpenOptionsFree(o);
    if (!t) return err_set(e, AIT_E_PARSE, "%s", s.msg[0] ? s.msg : "cannot open");
    ait_status st = read_rgba(t, &s, im, e);
    TIFFClose(t);
    return st;
}
