/* onnx.TensorProto -> tensor: every storage field the spec allows, raw
 * little-endian data, and external data files confined to the model's folder. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/onnx.h"
#include "io/onnx_tensor.h"
#include "onnx.pb-c.h"

/* True when walking the components of the relative path loc ever climbs above
 * its starting folder ("a/../../b"). Checked before the file system is asked,
 * so the refusal does not depend on whether the target exists. */
static bool path_climbs_out(const char *loc)
{
    int depth = 0;
    for (const char *p = loc; *p;) {
        size_t n = strcspn(p, "/");
        if (n == 2 && p[0] == '.' && p[1] == '.') {
            if (--depth < 0) return true;
        } else if (n && !(n == 1 && p[0] == '.')) {
            depth++;
        }
        p += n;
        while (*p == '/') p++;
    }
    return false;
}

/* Reads tp's external data into dst; with dst NULL, only checks the path and
 * that the file holds need bytes at the offset (before anything is allocated). */
static ait_status ext_read(const Onnx__TensorProto *tp, const char *dir, void *dst, size_t need,
                           const char *what, ait_error *e)
{
    const char *loc = NULL;
    long long off = 0, len = -1;
    for (size_t i = 0; i < tp->n_external_data; i++) {
        const Onnx__StringStringEntryProto *kv = tp->external_data[i];
        if (!kv->key || !kv->value) continue;
        char *end = NULL;
        if (strcmp(kv->key, "location") == 0) loc = kv->value;
        else if (strcmp(kv->key, "offset") == 0) off = strtoll(kv->value, &end, 10);
        else if (strcmp(kv->key, "length") == 0) len = strtoll(kv->value, &end, 10);
        if (end && (*end || end == kv->value))
            return err_set(e, AIT_E_PARSE, "%s: external data %s '%s' is not a number", what,
                           kv->key, kv->value);
    }
    if (!loc || !*loc) return err_set(e, AIT_E_PARSE, "%s: external data has no location", what);
    if (!dir)
        return err_set(e, AIT_E_UNSUPPORTED, "%s: external data '%s' outside a model file", what,
                       loc);
    if (loc[0] == '/')
        return err_set(e, AIT_E_SECURITY, "%s: external data path '%s' is absolute; it must be "
                       "relative to the model's folder", what, loc);
    if (path_climbs_out(loc))
        return err_set(e, AIT_E_SECURITY,
                       "%s: external data path '%s' leaves the model's folder %s", what, loc, dir);
    char joined[PATH_MAX], real[PATH_MAX];
    if (snprintf(joined, sizeof joined, "%s/%s", dir, loc) >= (int)sizeof joined)
        return err_set(e, AIT_E_IO, "%s: external data path '%s' is too long", what, loc);
    if (!realpath(joined, real))
        return err_set(e, AIT_E_IO, "%s: external data file '%s': %s", what, joined,
                       strerror(errno));
    size_t dl = strlen(dir);
    if (strncmp(real, dir, dl) != 0 || (real[dl] != '/' && real[dl] != 0))
        return err_set(e, AIT_E_SECURITY,
                       "%s: external data path '%s' leaves the model's folder %s", what, loc, dir);
    if (off < 0 || (len >= 0 && (size_t)len != need))
        return err_set(e, AIT_E_PARSE, "%s: external data offset %lld / length %lld do not fit "
                       "the tensor's %zu bytes", what, off, len, need);
    struct stat sb;
    if (stat(real, &sb) != 0)
        return err_set(e, AIT_E_IO, "%s: external data file '%s': %s", what, real, strerror(errno));
    if (!S_ISREG(sb.st_mode) || (unsigned long long)off > (unsigned long long)sb.st_size ||
        need > (unsigned long long)sb.st_size - (unsigned long long)off)
        return err_set(e, AIT_E_PARSE, "%s: external data file %s is too short or not a regular "
                       "file (%lld bytes; the tensor needs %zu at offset %lld)", what, real,
                       (long long)sb.st_size, need, off);
    if (!dst) return AIT_OK;
    FILE *f = fopen(real, "rb");
    if (!f) return err_set(e, AIT_E_IO, "%s: cannot open %s: %s", what, real, strerror(errno));
    size_t got = 0;
    if (fseeko(f, (off_t)off, SEEK_SET) == 0) got = fread(dst, 1, need, f);
    fclose(f);
    if (got != need)
        return err_set(e, AIT_E_PARSE, "%s: external data file %s is too short (%zu of %zu bytes "
                       "at offset %lld)", what, real, got, need, off);
    return AIT_OK;
}

/* Copies typed-field values, checking the count (sets s on a mismatch). */
#define COPY_FIELD(field, ctype)                                                              \
    do {                                                                                      \
        if ((int64_t)tp->n_##field != numel)                                                  \
            s = err_set(e, AIT_E_PARSE, "%s: has %zu values for %lld elements", what,         \
                        tp->n_##field, (long long)numel);                                     \
        else                                                                                  \
            for (int64_t i = 0; i < numel; i++) ((ctype *)dst)[i] = (ctype)tp->field[i];      \
    } while (0)

/* A string tensor's string_data (raw or external data cannot hold strings:
 * storage_fits refuses them).
 * An element with a NUL byte inside is refused: ait's strings end at their
 * first NUL, so it would be silently cut. */
static ait_status strings_from_proto(const Onnx__TensorProto *tp, tensor *t, int64_t numel,
                                     const char *what, ait_error *e)
{
    if ((int64_t)tp->n_string_data != numel)
        return err_set(e, AIT_E_PARSE, "%s: has %zu strings for %lld elements", what,
                       tp->n_string_data, (long long)numel);
    for (int64_t i = 0; i < numel; i++) {
        const ProtobufCBinaryData *b = &tp->string_data[i];
        if (b->len && memchr(b->data, 0, b->len))
            return err_set(e, AIT_E_UNSUPPORTED, "%s: string %lld contains a NUL byte", what,
                           (long long)i);
        TRY(tensor_set_str(t, i, (const char *)b->data, b->len, e));
    }
    return AIT_OK;
}

bool tensor_proto_external(const Onnx__TensorProto *tp)
{
    return tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
}

const char *tensor_proto_absent(const Onnx__TensorProto *tp)
{
    const char *loc = NULL, *sha = NULL;
    for (size_t i = 0; tensor_proto_external(tp) && i < tp->n_external_data; i++) {
        const Onnx__StringStringEntryProto *kv = tp->external_data[i];
        if (kv->key && kv->value && strcmp(kv->key, "location") == 0) loc = kv->value;
        if (kv->key && kv->value && strcmp(kv->key, "sha256") == 0) sha = kv->value;
    }
    return loc && strcmp(loc, ONNX_ABSENT_LOCATION) == 0 ? (sha ? sha : "") : NULL;
}

/* A new tensor of tp's type and shape, checked, without data. */
static ait_status shape_of(const Onnx__TensorProto *tp, tensor **out, int64_t *numel,
                           const char *what, ait_error *e)
{
    ait_dtype dt = (ait_dtype)tp->data_type;
    size_t es = ait_dtype_size(dt);
    if (!es)
        return err_set(e, AIT_E_UNSUPPORTED, "%s: element type %s (%d) is not supported", what,
                       ait_dtype_name(dt), tp->data_type);
    if (tp->n_dims > AIT_MAX_RANK)
        return err_set(e, AIT_E_UNSUPPORTED, "%s: rank %zu exceeds the maximum of %d", what,
                       tp->n_dims, AIT_MAX_RANK);
    if (tp->segment) return err_set(e, AIT_E_UNSUPPORTED, "%s: segmented tensors", what);
    TRY(shape_numel(tp->dims, (int)tp->n_dims, dt, numel, what, e));
    tensor *t = calloc(1, sizeof *t);
    if (!t) return err_set(e, AIT_E_NOMEM, "out of memory");
    tensor_set_shape(t, dt, (int)tp->n_dims, tp->dims);
    *out = t;
    return AIT_OK;
}

ait_status tensor_shape_from_proto(const Onnx__TensorProto *tp, tensor **out, const char *what,
                                   ait_error *e)
{
    int64_t numel;
    return shape_of(tp, out, &numel, what, e);
}

/* Refuses, before the tensor is allocated, stored data that cannot fill the
 * shape: a few bytes declaring billions of elements must not cost gigabytes
 * first. The copies below check the exact counts again. */
static ait_status storage_fits(const Onnx__TensorProto *tp, const char *dir, int64_t numel,
                               const char *what, ait_error *e)
{
    ait_dtype dt = (ait_dtype)tp->data_type;
    size_t need = (size_t)dtype_stored_bytes(dt, numel), have;
    if (dt == AIT_STRING && (tensor_proto_external(tp) || tp->has_raw_data))
        return err_set(e, AIT_E_PARSE, "%s: a string tensor must keep its strings in string_data, "
                       "not in raw or external data", what);
    if (numel == 0 && !tp->has_raw_data) return AIT_OK;
    if (dt == AIT_STRING) have = tp->n_string_data, need = (size_t)numel;
    else if (tensor_proto_external(tp)) return ext_read(tp, dir, NULL, need, what, e);
    else if (tp->has_raw_data) {
        if (tp->raw_data.len != need)
            return err_set(e, AIT_E_PARSE, "%s: raw data has %zu bytes, the shape needs %zu", what,
                           tp->raw_data.len, need);
        return AIT_OK;
    } else if (dtype_bits(dt) < 8) have = tp->n_int32_data;
    else {
        have = tp->n_float_data + tp->n_double_data + tp->n_int64_data + tp->n_uint64_data +
               tp->n_int32_data;
        need = (size_t)numel;
    }
    if (have < need)
        return err_set(e, AIT_E_PARSE, "%s: holds %zu stored values or bytes, its shape (%lld "
                       "elements) needs %zu", what, have, (long long)numel, need);
    return AIT_OK;
}

ait_status tensor_from_proto(const Onnx__TensorProto *tp, const char *dir, tensor **out,
                             const char *what, ait_error *e)
{
    ait_dtype dt = (ait_dtype)tp->data_type;
    int64_t numel;
    tensor *t;
    TRY(shape_of(tp, &t, &numel, what, e));
    ait_status s = storage_fits(tp, dir, numel, what, e);
    if (s == AIT_OK) s = tensor_alloc(t, e);
    if (s != AIT_OK) {
        free(t);
        return s;
    }
    void *dst = t->data;
    /* 4- and 2-bit types are stored packed: read that, unpack in place below */
    size_t need = (size_t)dtype_stored_bytes(dt, numel);
    bool packed = dtype_bits(dt) < 8;
    s = AIT_OK;
    if (dt == AIT_STRING) {
        s = strings_from_proto(tp, t, numel, what, e);
    } else if (tensor_proto_external(tp)) {
        s = ext_read(tp, dir, dst, need, what, e);
    } else if (tp->has_raw_data) { /* its length checked by storage_fits */
        if (need) memcpy(dst, tp->raw_data.data, need);
    } else if (numel > 0 && packed) { /* int32_data: one packed byte per entry */
        if (tp->n_int32_data != need)
            s = err_set(e, AIT_E_PARSE, "%s: has %zu int32_data values, %lld packed %s elements "
                        "need %zu", what, tp->n_int32_data, (long long)numel,
                        ait_dtype_name(dt), need);
        else
            for (size_t i = 0; i < need; i++) ((uint8_t *)dst)[i] = (uint8_t)tp->int32_data[i];
    } else if (numel > 0) {
        switch (dt) {
        case AIT_F32: COPY_FIELD(float_data, float); break;
        case AIT_F64: COPY_FIELD(double_data, double); break;
        case AIT_I64: COPY_FIELD(int64_data, int64_t); break;
        case AIT_U32: COPY_FIELD(uint64_data, uint32_t); break;
        case AIT_U64: COPY_FIELD(uint64_data, uint64_t); break;
        case AIT_I32: COPY_FIELD(int32_data, int32_t); break;
        case AIT_I16: COPY_FIELD(int32_data, int16_t); break;
        case AIT_U16: case AIT_F16: case AIT_BF16: COPY_FIELD(int32_data, uint16_t); break;
        case AIT_I8: COPY_FIELD(int32_data, int8_t); break;
        case AIT_U8: case AIT_F8E4M3FN: case AIT_F8E4M3FNUZ: case AIT_F8E5M2:
        case AIT_F8E5M2FNUZ: case AIT_F8E8M0: /* the float8 types: their codes */
            COPY_FIELD(int32_data, uint8_t);
            break;
        case AIT_BOOL:
            COPY_FIELD(int32_data, uint8_t);
            for (int64_t i = 0; i < numel; i++) ((uint8_t *)dst)[i] = ((uint8_t *)dst)[i] != 0;
            break;
        default:
            s = err_set(e, AIT_E_UNSUPPORTED, "%s: element type %s", what, ait_dtype_name(dt));
        }
    }
    if (s == AIT_OK && packed) small_unpack(dt, dst, numel);
    if (s != AIT_OK) {
        tensor_release(t);
        free(t);
        return s;
    }
    *out = t;
    return AIT_OK;
}

ait_status tensor_borrow_proto(const Onnx__TensorProto *tp, const char *dir, tensor **out,
                               const char *what, ait_error *e)
{
    ait_dtype dt = (ait_dtype)tp->data_type;
    if (!tp->has_raw_data || tensor_proto_external(tp) || dt == AIT_STRING ||
        dtype_bits(dt) < 8 || tp->raw_data.len < ONNX_BORROW_MIN)
        return tensor_from_proto(tp, dir, out, what, e);
    int64_t numel;
    tensor *t;
    TRY(shape_of(tp, &t, &numel, what, e));
    ait_status s = storage_fits(tp, dir, numel, what, e); /* raw_data's length: the shape's */
    if (s != AIT_OK) {
        free(t);
        return s;
    }
    t->data = tp->raw_data.data; /* not owned: the caller's bytes */
    *out = t;
    return AIT_OK;
}

ait_status tensor_from_pb(const uint8_t *buf, size_t len, tensor **out, char **name,
                          const char *what, ait_error *e)
{
    Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, len, buf);
    if (!tp) return err_set(e, AIT_E_PARSE, "%s: not a valid TensorProto (truncated or corrupt)", what);
    ait_status s = tensor_from_proto(tp, NULL, out, what, e);
    if (s == AIT_OK && name) *name = strdup(tp->name ? tp->name : "");
    onnx__tensor_proto__free_unpacked(tp, NULL);
    return s;
}
