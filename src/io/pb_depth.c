/* A pre-check of an ONNX file's nesting before protobuf-c unpacks it.
 * protobuf-c recurses once per nested message with no limit, so a small
 * crafted file (graphs inside attributes inside graphs..., or sequence types
 * of sequence types...) could exhaust the stack. This scanner walks only the
 * fields through which ONNX messages can nest and refuses excessive depth;
 * it also rejects malformed wire data early with a precise message. */
#include "io/pb_depth.h"
#include "io/pb_wire.h"

#include <stdbool.h>

#define MAX_DEPTH 96 /* message levels; the loader allows 64 graph levels */

typedef enum { M_OTHER, M_MODEL, M_GRAPH, M_NODE, M_ATTR, M_VALUEINFO, M_TYPE, M_TYPE_INNER,
               M_TRAINING, M_FUNCTION } msg_kind;

/* The kind of message field `f` of a `k` message holds (M_OTHER: not followed). */
static msg_kind child(msg_kind k, uint64_t f)
{
    switch (k) {
    case M_MODEL: return f == 7 ? M_GRAPH : f == 20 ? M_TRAINING : f == 25 ? M_FUNCTION : M_OTHER;
    case M_GRAPH: return f == 1 ? M_NODE : (f >= 11 && f <= 13) ? M_VALUEINFO : M_OTHER;
    case M_NODE: return f == 5 ? M_ATTR : M_OTHER;
    case M_ATTR: return f == 6 || f == 11 ? M_GRAPH : f == 14 || f == 15 ? M_TYPE : M_OTHER;
    case M_VALUEINFO: return f == 2 ? M_TYPE : M_OTHER;
    case M_TYPE: return f == 4 || f == 5 || f == 9 ? M_TYPE_INNER : M_OTHER;
    case M_TYPE_INNER: return f == 1 || f == 2 ? M_TYPE : M_OTHER; /* elem_type / value_type */
    case M_TRAINING: return f == 1 || f == 2 ? M_GRAPH : M_OTHER;
    case M_FUNCTION: return f == 7 ? M_NODE : M_OTHER;
    default: return M_OTHER;
    }
}

/* Returns 0 if fine, 1 if too deep, 2 if malformed. */
static int scan(const uint8_t *p, const uint8_t *end, msg_kind k, int depth)
{
    if (depth > MAX_DEPTH) return 1;
    while (p < end) {
        uint64_t key, v;
        if (!pb_varint(&p, end, &key)) return 2;
        switch (key & 7) {
        case 0:
            if (!pb_varint(&p, end, &v)) return 2;
            break;
        case 1:
            if (end - p < 8) return 2;
            p += 8;
            break;
        case 5:
            if (end - p < 4) return 2;
            p += 4;
            break;
        case 2: {
            if (!pb_varint(&p, end, &v) || v > (uint64_t)(end - p)) return 2;
            msg_kind c = child(k, key >> 3);
            if (c != M_OTHER) {
                int r = scan(p, p + v, c, depth + 1);
                if (r) return r;
            }
            p += v;
            break;
        }
        default: return 2; /* groups (3, 4) are not used by ONNX; others are invalid */
        }
    }
    return 0;
}

ait_status pb_check_model(const uint8_t *buf, size_t len, const char *path, ait_error *e)
{
    switch (scan(buf, buf + len, M_MODEL, 0)) {
    case 0: return AIT_OK;
    case 1:
        return err_set(e, AIT_E_UNSUPPORTED, "%s: messages nest deeper than %d levels (subgraphs "
                       "or types inside each other)", path, MAX_DEPTH);
    default:
        return err_set(e, AIT_E_PARSE, "%s: not a valid ONNX model (the protobuf is truncated or "
                       "corrupt)", path);
    }
}
