/* A ModelProto without its initializers' raw_data, and where each was
 * (io/onnx_strip.h). Three levels of wire data are walked (model, graph,
 * initializer); everything but the raw_data fields is copied byte for byte,
 * with the graph's and each initializer's length written again. */
#include "io/onnx_strip.h"
#include "io/pb_wire.h"

#include <stdlib.h>
#include <string.h>

enum { F_MODEL_GRAPH = 7, F_GRAPH_INIT = 5, F_TENSOR_RAW = 9, WT_LEN = 2 };

/* One field of wire data: its number and type, where it starts (its key),
 * where a length-delimited value's bytes are, and where it ends. */
typedef struct field {
    uint64_t num;
    unsigned wt;
    const uint8_t *start, *val, *end;
    size_t val_len;
} field;

/* The field at *p (before end) into f, *p past it; false when malformed. */
static bool next_field(const uint8_t **p, const uint8_t *end, field *f)
{
    uint64_t key, v;
    f->start = *p;
    if (!pb_varint(p, end, &key)) return false;
    f->num = key >> 3;
    f->wt = (unsigned)(key & 7);
    f->val = NULL;
    f->val_len = 0;
    switch (f->wt) {
    case 0:
        if (!pb_varint(p, end, &v)) return false;
        break;
    case 1:
        if (end - *p < 8) return false;
        *p += 8;
        break;
    case 5:
        if (end - *p < 4) return false;
        *p += 4;
        break;
    case WT_LEN:
        if (!pb_varint(p, end, &v) || v > (uint64_t)(end - *p)) return false;
        f->val = *p;
        f->val_len = (size_t)v;
        *p += v;
        break;
    default: return false; /* groups: ONNX has none */
    }
    f->end = *p;
    return true;
}

static size_t varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) v >>= 7, n++;
    return n;
}

static uint8_t *put_varint(uint8_t *o, uint64_t v)
{
    while (v >= 0x80) *o++ = (uint8_t)(v | 0x80), v >>= 7;
    *o++ = (uint8_t)v;
    return o;
}

/* One initializer: its field in the graph, its TensorProto's bytes and its
 * raw_data field (raw.start NULL: none). */
typedef struct init {
    field f, raw;
    size_t new_len; /* the TensorProto without raw */
} init;

/* The initializers of the graph value g[len] into *list (*n), or false when
 * the layout is not the plain one. */
static bool scan_graph(const uint8_t *g, size_t len, init **list, size_t *n, bool *nomem)
{
    size_t cap = 0;
    const uint8_t *p = g, *end = g + len;
    while (p < end) {
        field f;
        if (!next_field(&p, end, &f)) return false;
        if (f.num != F_GRAPH_INIT) continue;
        if (f.wt != WT_LEN) return false;
        if (*n == cap) {
            cap = cap ? 2 * cap : 64;
            init *l = realloc(*list, cap * sizeof *l);
            if (!l) return !(*nomem = true);
            *list = l;
        }
        init *in = &(*list)[(*n)++];
        memset(in, 0, sizeof *in);
        in->f = f;
        const uint8_t *q = f.val, *qe = f.val + f.val_len;
        while (q < qe) {
            field t;
            if (!next_field(&q, qe, &t)) return false;
            if (t.num != F_TENSOR_RAW) continue;
            if (t.wt != WT_LEN || in->raw.start) return false; /* twice: protobuf's last wins */
            in->raw = t;
        }
        in->new_len = f.val_len - (in->raw.start ? (size_t)(in->raw.end - in->raw.start) : 0);
    }
    return true;
}

ait_status onnx_strip_raw(const uint8_t *buf, size_t len, uint8_t **out, size_t *out_len,
                          onnx_span **spans, size_t *n, ait_error *e)
{
    *out = NULL;
    *out_len = 0;
    *spans = NULL;
    *n = 0;
    field graph = {0}, f;
    int graphs = 0;
    for (const uint8_t *p = buf, *end = buf + len; p < end;) {
        if (!next_field(&p, end, &f)) return AIT_OK;
        if (f.num == F_MODEL_GRAPH && (f.wt != WT_LEN || graphs++)) return AIT_OK; /* merged */
        if (f.num == F_MODEL_GRAPH) graph = f;
    }
    if (!graphs) return AIT_OK;
    init *list = NULL;
    size_t count = 0;
    bool nomem = false;
    if (!scan_graph(graph.val, graph.val_len, &list, &count, &nomem) || !count) {
        free(list);
        return nomem ? err_set(e, AIT_E_NOMEM, "out of memory") : AIT_OK;
    }
    size_t glen = graph.val_len; /* the graph's new length */
    for (size_t i = 0; i < count; i++)
        glen = glen - (size_t)(list[i].f.end - list[i].f.start) + 1 + varint_len(list[i].new_len) +
               list[i].new_len;
    size_t total = (size_t)(graph.start - buf) + 1 + varint_len(glen) + glen +
                   (size_t)(buf + len - graph.end);
    uint8_t *o = malloc(total ? total : 1);
    onnx_span *sp = calloc(count, sizeof *sp);
    if (!o || !sp) {
        free(o);
        free(sp);
        free(list);
        return err_set(e, AIT_E_NOMEM, "out of memory");
    }
    uint8_t *w = o;
#define COPY(from, to) (memcpy(w, (from), (size_t)((to) - (from))), w += (to) - (from))
    COPY(buf, graph.start);
    *w++ = F_MODEL_GRAPH << 3 | WT_LEN;
    w = put_varint(w, glen);
    const uint8_t *at = graph.val;
    for (size_t i = 0; i < count; i++) {
        const init *in = &list[i];
        COPY(at, in->f.start);
        *w++ = F_GRAPH_INIT << 3 | WT_LEN;
        w = put_varint(w, in->new_len);
        if (in->raw.start) {
            COPY(in->f.val, in->raw.start);
            COPY(in->raw.end, in->f.end);
            sp[i] = (onnx_span){in->raw.val, in->raw.val_len, true};
        } else {
            COPY(in->f.val, in->f.end);
        }
        at = in->f.end;
    }
    COPY(at, graph.end);
    COPY(graph.end, buf + len);
#undef COPY
    free(list);
    *out = o;
    *out_len = (size_t)(w - o);
    *spans = sp;
    *n = count;
    return AIT_OK;
}
