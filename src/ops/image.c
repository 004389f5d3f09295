/* ImageDecoder (opset 20): an encoded image (uint8 bytes) to uint8 pixels
 * [H, W, C], C = 3 for pixel_format RGB and BGR, 1 for Grayscale. The
 * decoders (image_decode*.c) give gray or RGB; gray becomes RGB by copying,
 * RGB becomes gray by ITU-R 601-2 luma, L = (19595 R + 38470 G + 7471 B +
 * 2^15) >> 16, as onnx's reference (Pillow's convert("L")) does. A stream
 * that cannot be decoded gives the spec's empty image, [0, 0, C]; an image
 * over the size limit, or no memory, is an error. */
#include <stdlib.h>
#include <string.h>

#include "ops/image_decode.h"
#include "ops/op.h"

enum { FMT_RGB, FMT_BGR, FMT_GRAY };
static const char *const formats[] = {"RGB", "BGR", "Grayscale"};

static ait_status pixel_format(op_ctx *c, int *fmt)
{
    const char *s = attr_str(c->n, "pixel_format", "RGB");
    for (int i = 0; i < 3; i++)
        if (strcmp(s, formats[i]) == 0) return *fmt = i, AIT_OK;
    return err_set(c->err, AIT_E_INVALID_ARG, "pixel_format '%s' is not RGB, BGR or Grayscale", s);
}

/* The output's shape depends on the bytes: run sets it (OP_ALLOCS_OUTPUTS). */
static ait_status image_infer(op_ctx *c)
{
    int fmt;
    TRY(check_dtype(c, c->in[0], "encoded_stream", 1, AIT_U8));
    TRY(pixel_format(c, &fmt));
    return AIT_DEFER;
}

static void convert(const image *im, int fmt, uint8_t *o)
{
    size_t n = (size_t)(im->w * im->h);
    const uint8_t *p = im->px;
    if (fmt == FMT_GRAY && im->ch == 1) {
        memcpy(o, p, n);
    } else if (fmt == FMT_GRAY) {
        for (size_t i = 0; i < n; i++, p += 3)
            o[i] = (uint8_t)((19595u * p[0] + 38470u * p[1] + 7471u * p[2] + 0x8000u) >> 16);
    } else if (im->ch == 1) {
        for (size_t i = 0; i < n; i++, o += 3) o[0] = o[1] = o[2] = p[i];
    } else {
        int r = fmt == FMT_BGR ? 2 : 0;
        for (size_t i = 0; i < n; i++, p += 3, o += 3) o[0] = p[r], o[1] = p[1], o[2] = p[2 - r];
    }
}

static ait_status image_run(op_ctx *c)
{
    int fmt;
    TRY(check_dtype(c, c->in[0], "encoded_stream", 1, AIT_U8));
    TRY(pixel_format(c, &fmt));
    const tensor *x = c->in[0];
    image im;
    ait_error why;
    ait_status s = image_decode(x->data, tensor_nbytes(x), 0, &im, &why);
    if (s != AIT_OK && s != AIT_E_PARSE) return err_set(c->err, s, "%s", why.msg);
    int64_t dims[3] = {s == AIT_OK ? im.h : 0, s == AIT_OK ? im.w : 0, fmt == FMT_GRAY ? 1 : 3};
    tensor_set_shape(c->out[0], AIT_U8, 3, dims);
    ait_status st = tensor_alloc(c->out[0], c->err);
    if (st == AIT_OK && s == AIT_OK) convert(&im, fmt, c->out[0]->data);
    image_free(&im); /* a failed decode left none */
    return st;
}

OP_TABLE(image, {"ImageDecoder", 1, 1, 1, 1, OP_ALLOCS_OUTPUTS, image_infer, image_run});
