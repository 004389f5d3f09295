/* JPEG 2000 (JP2 files and bare J2K codestreams) through OpenJPEG, reading
 * the buffer through the stream functions below; its messages go to quiet
 * handlers, it runs on the calling thread only (opj_codec_set_threads 0
 * overrides OPJ_NUM_THREADS), and only the components used are decoded.
 * One or two components give gray, three or four RGB (alpha dropped);
 * samples of other precisions are scaled to 0..255. Subsampled components
 * and YCC or CMYK colour spaces are not decoded. */
#include <openjpeg.h>
#include <stdio.h>
#include <string.h>

#include "ops/image_decode.h"

typedef struct src {
    const uint8_t *d;
    size_t n, at;
    char msg[160];
} src;

static OPJ_SIZE_T on_read(void *out, OPJ_SIZE_T len, void *user)
{
    src *s = user;
    if (s->at >= s->n) return (OPJ_SIZE_T)-1;
    size_t k = len < s->n - s->at ? len : s->n - s->at;
    memcpy(out, s->d + s->at, k);
    s->at += k;
    return k;
}

static OPJ_OFF_T on_skip(OPJ_OFF_T len, void *user)
{
    src *s = user;
    if (len < 0 ? (size_t)-len > s->at : (uint64_t)len > s->n - s->at) return -1;
    s->at = (size_t)((OPJ_OFF_T)s->at + len);
    return len;
}

static OPJ_BOOL on_seek(OPJ_OFF_T pos, void *user)
{
    src *s = user;
    if (pos < 0 || (uint64_t)pos > s->n) return OPJ_FALSE;
    s->at = (size_t)pos;
    return OPJ_TRUE;
}

static void on_error(const char *msg, void *user)
{
    src *s = user;
    if (!s->msg[0]) {
        snprintf(s->msg, sizeof s->msg, "%s", msg);
        size_t k = strlen(s->msg);
        if (k && s->msg[k - 1] == '\n') s->msg[k - 1] = 0;
    }
}

static void on_quiet(const char *msg, void *user) {}

/* Copies the decoded components into im (allocated), scaled to 8 bits. */
static ait_status convert(const opj_image_t *img, image *im, ait_error *e)
{
    int ch = img->numcomps >= 3 ? 3 : 1;
    int64_t w = (int64_t)img->x1 - img->x0, h = (int64_t)img->y1 - img->y0;
    for (int c = 0; c < ch; c++) {
        const opj_image_comp_t *k = &img->comps[c];
        if (!k->data || k->w != w || k->h != h || k->prec < 1 || k->prec > 31)
            return err_set(e, AIT_E_PARSE, "component %d is subsampled or has no data", c);
    }
    TRY(image_alloc(im, w, h, ch, e));
    for (int c = 0; c < ch; c++) {
        const opj_image_comp_t *k = &img->comps[c];
        int64_t max = ((int64_t)1 << k->prec) - 1, off = k->sgnd ? (int64_t)1 << (k->prec - 1) : 0;
        for (int64_t i = 0; i < w * h; i++) {
            int64_t v = (int64_t)k->data[i] + off;
            v = v < 0 ? 0 : v > max ? max : v;
            im->px[i * ch + c] = (uint8_t)(k->prec == 8 ? v : (v * 255 + max / 2) / max);
        }
    }
    return AIT_OK;
}

static ait_status decode(opj_codec_t *codec, opj_stream_t *st, src *s, image *im, ait_error *e)
{
    opj_dparameters_t par;
    opj_set_default_decoder_parameters(&par);
    opj_image_t *img = NULL;
    if (!opj_setup_decoder(codec, &par) || !opj_codec_set_threads(codec, 0) ||
        !opj_read_header(st, codec, &img))
        goto fail;
    if (img->numcomps < 1 || img->x1 <= img->x0 || img->y1 <= img->y0) goto fail;
    if (img->color_space == OPJ_CLRSPC_SYCC || img->color_space == OPJ_CLRSPC_EYCC ||
        img->color_space == OPJ_CLRSPC_CMYK) {
        snprintf(s->msg, sizeof s->msg, "YCC and CMYK colour spaces are not supported");
        goto fail;
    }
    /* The size limit before OpenJPEG allocates the components. */
    ait_status r = image_check(im, img->x1 - img->x0, img->y1 - img->y0, e);
    if (r != AIT_OK) {
        opj_image_destroy(img);
        return r;
    }
    OPJ_UINT32 comps[3] = {0, 1, 2};
    if (!opj_set_decoded_components(codec, img->numcomps >= 3 ? 3 : 1, comps, OPJ_FALSE) ||
        !opj_decode(codec, st, img) || !opj_end_decompress(codec, st))
        goto fail;
    r = convert(img, im, e);
    opj_image_destroy(img);
    return r;
fail:
    opj_image_destroy(img);
    return err_set(e, AIT_E_PARSE, "%s", s->msg[0] ? s->msg : "invalid stream");
}

ait_status image_jp2(const uint8_t *d, size_t n, image *im, ait_error *e)
{
    src s = {d, n, 0, ""};
    bool raw = d[0] == 0xff; /* a bare codestream; JP2 files start with a box */
    opj_codec_t *codec = opj_create_decompress(raw ? OPJ_CODEC_J2K : OPJ_CODEC_JP2);
    opj_stream_t *st = opj_stream_create(1 << 16, OPJ_TRUE);
    if (!codec || !st) {
        if (codec) opj_destroy_codec(codec);
        if (st) opj_stream_destroy(st);
        return err_set(e, AIT_E_NOMEM, "out of memory");
    }
    opj_set_error_handler(codec, on_error, &s);
    opj_set_warning_handler(codec, on_quiet, &s);
    opj_set_info_handler(codec, on_quiet, &s);
    opj_stream_set_user_data(st, &s, NULL);
    opj_stream_set_user_data_length(st, n);
    opj_stream_set_read_function(st, on_read);
    opj_stream_set_skip_function(st, on_skip);
    opj_stream_set_seek_function(st, on_seek);
    ait_status r = decode(codec, st, &s, im, e);
    opj_stream_destroy(st);
    opj_destroy_codec(codec);
    return r;
}
