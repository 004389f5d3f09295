/* The lean model an artifact embeds: the ONNX file with the data of the
 * weights its prepared blobs replace left out (io/onnx.h, onnx_leave_out). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/onnx.h"
#include "io/pb_depth.h"
#include "onnx.pb-c.h"

/* A malloc'd key/value entry (protobuf-c's free_unpacked frees it: its
 * default allocator is malloc). */
static Onnx__StringStringEntryProto *entry(const char *key, const char *value)
{
    Onnx__StringStringEntryProto *kv = malloc(sizeof *kv);
    if (!kv) return NULL;
    onnx__string_string_entry_proto__init(kv);
    kv->key = strdup(key);
    kv->value = strdup(value);
    if (!kv->key || !kv->value) {
        free(kv->key);
        free(kv->value);
        free(kv);
        return NULL;
    }
    return kv;
}

/* Drops tp's data and marks it left out with digest sha; false: no memory. */
static bool leave_out(Onnx__TensorProto *tp, const char *sha)
{
    Onnx__StringStringEntryProto **kv = calloc(2, sizeof *kv);
    if (!kv || !(kv[0] = entry("location", ONNX_ABSENT_LOCATION)) || !(kv[1] = entry("sha256", sha))) {
        if (kv) onnx__string_string_entry_proto__free_unpacked(kv[0], NULL);
        free(kv);
        return false;
    }
    free(tp->raw_data.data);
    tp->raw_data.data = NULL;
    tp->raw_data.len = 0;
    tp->has_raw_data = 0;
#define DROP(f) (free(tp->f), tp->f = NULL, tp->n_##f = 0)
    DROP(float_data), DROP(double_data), DROP(int32_data), DROP(int64_data), DROP(uint64_data);
#undef DROP
    for (size_t i = 0; i < tp->n_external_data; i++)
        onnx__string_string_entry_proto__free_unpacked(tp->external_data[i], NULL);
    free(tp->external_data);
    tp->external_data = kv;
    tp->n_external_data = 2;
    tp->has_data_location = 1;
    tp->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    return true;
}

ait_status onnx_leave_out(const uint8_t *buf, size_t len, const char *name,
                          const char *const *names, const char *const *sha, int n,
                          uint8_t **out, size_t *out_len, int *n_left, ait_error *e)
{
    *out = NULL;
    *out_len = 0;
    *n_left = 0;
    TRY(pb_check_model(buf, len, name, e));
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, buf);
    if (!mp || !mp->graph) {
        if (mp) onnx__model_proto__free_unpacked(mp, NULL);
        return err_set(e, AIT_E_PARSE, "%s: not a valid ONNX model", name);
    }
    ait_status s = AIT_OK;
    for (int k = 0; s == AIT_OK && k < n; k++) {
        Onnx__TensorProto *tp = NULL;
        for (size_t i = 0; !tp && i < mp->graph->n_initializer; i++)
            if (mp->graph->initializer[i]->name && !strcmp(mp->graph->initializer[i]->name, names[k]))
                tp = mp->graph->initializer[i];
        if (tp && !leave_out(tp, sha[k])) s = err_set(e, AIT_E_NOMEM, "out of memory");
        *n_left += tp != NULL;
    }
    size_t size = s == AIT_OK ? onnx__model_proto__get_packed_size(mp) : 0;
    uint8_t *bytes = s == AIT_OK ? malloc(size ? size : 1) : NULL;
    if (s == AIT_OK && !bytes) s = err_set(e, AIT_E_NOMEM, "out of memory");
    if (s == AIT_OK) {
        *out_len = onnx__model_proto__pack(mp, bytes);
        *out = bytes;
    }
    onnx__model_proto__free_unpacked(mp, NULL);
    return s;
}
