/* JPEG through libjpeg(-turbo) with its defaults: the "fancy" (smooth) chroma
 * upsampling the spec describes and the accurate integer IDCT. Errors come
 * back by longjmp instead of libjpeg's exit(); messages are dropped. A
 * truncated stream is an error (libjpeg would pad it with gray), and so is
 * a progressive stream of more than MAX_SCANS scans (hostile ones take
 * quadratic time). Gray JPEGs decode to 1 channel, YCbCr and RGB ones to
 * RGB, CMYK and YCCK ones (Adobe's inverted values) to RGB. */
#include <setjmp.h>
#include <stdio.h>
/* jpeglib.h needs stdio.h first */
#include <jerror.h>
#include <jpeglib.h>

#include "ops/image_decode.h"

#define MAX_SCANS 500

typedef struct jerr {
    struct jpeg_error_mgr pub;
    jmp_buf jb;
    char msg[JMSG_LENGTH_MAX];
} jerr;

static void on_error(j_common_ptr ci)
{
    jerr *j = (jerr *)ci->err;
    ci->err->format_message(ci, j->msg);
    longjmp(j->jb, 1);
}

/* Warnings (level < 0) and traces: dropped, but for the end of the data. */
static void on_message(j_common_ptr ci, int level)
{
    if (level < 0 && ci->err->msg_code == JWRN_JPEG_EOF) on_error(ci);
}

static void on_progress(j_common_ptr ci)
{
    jerr *j = (jerr *)ci->err;
    if (ci->is_decompressor && ((j_decompress_ptr)ci)->input_scan_number > MAX_SCANS) {
        snprintf(j->msg, sizeof j->msg, "more than %d scans", MAX_SCANS);
        longjmp(j->jb, 1);
    }
}

/* CMYK to RGB: r = (255 - c) * (255 - k) / 255, rounded. Adobe's files (all
 * but a few) store the values inverted. */
static void cmyk_row(const uint8_t *in, uint8_t *out, JDIMENSION w, bool inverted)
{
    for (JDIMENSION x = 0; x < w; x++, in += 4, out += 3) {
        unsigned k = inverted ? in[3] : 255u - in[3];
        for (int c = 0; c < 3; c++) {
            unsigned v = (inverted ? in[c] : 255u - in[c]) * k + 128;
            out[c] = (uint8_t)((v + (v >> 8)) >> 8);
        }
    }
}

ait_status image_jpeg(const uint8_t *d, size_t n, image *im, ait_error *e)
{
    struct jpeg_decompress_struct ci = {0};
    struct jpeg_progress_mgr prog = {.progress_monitor = on_progress};
    jerr je;
    ci.err = jpeg_std_error(&je.pub);
    je.pub.error_exit = on_error;
    je.pub.emit_message = on_message;
    if (setjmp(je.jb)) {
        jpeg_destroy_decompress(&ci);
        return err_set(e, AIT_E_PARSE, "%s", je.msg);
    }
    jpeg_create_decompress(&ci);
    ci.progress = &prog;
    jpeg_mem_src(&ci, d, (unsigned long)n);
    jpeg_read_header(&ci, TRUE);
    bool cmyk = ci.jpeg_color_space == JCS_CMYK || ci.jpeg_color_space == JCS_YCCK;
    ci.out_color_space = ci.num_components == 1 ? JCS_GRAYSCALE : cmyk ? JCS_CMYK : JCS_RGB;
    int ch = ci.num_components == 1 ? 1 : 3;
    ait_status s = image_alloc(im, ci.image_width, ci.image_height, ch, e);
    if (s != AIT_OK) {
        jpeg_destroy_decompress(&ci);
        return s;
    }
    jpeg_start_decompress(&ci);
    if (ci.output_components != (cmyk ? 4 : ch) || ci.output_width != im->w ||
        ci.output_height != im->h) {
        snprintf(je.msg, sizeof je.msg, "unexpected output layout");
        longjmp(je.jb, 1);
    }
    JSAMPARRAY tmp = cmyk ? ci.mem->alloc_sarray((j_common_ptr)&ci, JPOOL_IMAGE,
                                                 ci.output_width * 4, 1) : NULL;
    while (ci.output_scanline < ci.output_height) {
        uint8_t *row = im->px + (size_t)ci.output_scanline * ci.output_width * ch;
        JSAMPROW r = tmp ? tmp[0] : row;
        jpeg_read_scanlines(&ci, &r, 1);
        if (tmp) cmyk_row(tmp[0], row, ci.output_width, ci.saw_Adobe_marker);
    }
    jpeg_finish_decompress(&ci);
    jpeg_destroy_decompress(&ci);
    return AIT_OK;
}
