/* Tensors inside ait: the public ait_tensor is this struct. */
#ifndef AIT_CORE_TENSOR_H
#define AIT_CORE_TENSOR_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ait.h"
#include "core/half.h"
#include "core/small_types.h"
#include "core/status.h"

/* What a value holds. ONNX optionals are a tensor, a sequence, or none. A
 * map (ai.onnx.ml's ZipMap, DictVectorizer, CastMap) holds two items: a 1-D
 * keys tensor (int64 or string, one entry per key, in order) and a 1-D
 * values tensor of the same length; its dtype is the values' type. */
typedef enum val_kind { VAL_TENSOR = 0, VAL_SEQUENCE, VAL_NONE, VAL_MAP } val_kind;

typedef struct ait_tensor {
    ait_dtype dtype; /* for a sequence: its element type */
    int rank;
    int64_t dims[AIT_MAX_RANK];
    void *data;  /* NULL while only the shape is known */
    size_t cap;  /* bytes of storage owned (0 if not owned) */
    /* Not owned: bytes of the caller's memory at data that ait may use (a
     * wrapped tensor, a bound output: ait_binding); 0 for every other
     * borrowed buffer (the arena, a constant). tensor_alloc keeps data
     * when the shape fits in it. */
    size_t room;
    bool owned;  /* data is ait's to free */
    /* Owned data that is a block of this pool (ait_session_run's outputs):
     * given back to it, not freed (core/block_pool.h); else NULL. */
    struct block_pool *pool;
    val_kind kind;
    int n_items, cap_items;     /* VAL_SEQUENCE: the items; VAL_MAP: keys, values; owned */
    struct ait_tensor *items;
} tensor;

/* Product of dims with overflow and negativity checks; also checks that the
 * byte size fits in size_t. `what` names the tensor in the message. */
ait_status shape_numel(const int64_t *dims, int rank, ait_dtype t, int64_t *numel,
                       const char *what, ait_error *e);

static inline int64_t tensor_numel(const tensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++) n *= t->dims[i];
    return n;
}
static inline size_t tensor_nbytes(const tensor *t)
{
    return (size_t)tensor_numel(t) * ait_dtype_size(t->dtype);
}
/* Sets dtype and shape (data untouched). */
void tensor_set_shape(tensor *t, ait_dtype dt, int rank, const int64_t *dims);
/* Makes t own at least its nbytes of storage, keeping a big-enough buffer
 * with the bytes it held (a new one is zeroed; strings' slots are NULL).
 * A borrowed buffer with room for the shape (a bound output) is kept as
 * it is, not owned. */
ait_status tensor_alloc(tensor *t, ait_error *e);
/* The same, every element zero (strings NULL) also in a buffer kept from an
 * earlier run: for an op that writes only some of its output. */
ait_status tensor_alloc_zeroed(tensor *t, ait_error *e);
/* Makes a tensor whose data is borrowed (not owned: a constant's bytes in
 * the buffer its model was read from) own a copy of it, 64-byte aligned
 * like tensor_alloc's; nothing for any other. */
ait_status tensor_own(tensor *t, ait_error *e);
/* Frees owned storage (and a sequence's items) and makes t a tensor again. */
void tensor_release(tensor *t);
/* Makes dst a deep copy of src of any kind, reusing dst's storage. */
ait_status tensor_copy_into(tensor *dst, const tensor *src, ait_error *e);
/* Turns t into an empty sequence of `elem`, or into none. */
void tensor_make_sequence(tensor *t, ait_dtype elem);
void tensor_make_none(tensor *t);
/* Makes t a map holding deep copies of keys and vals (1-D, equal lengths;
 * keys int64 or string). */
ait_status tensor_make_map(tensor *t, const tensor *keys, const tensor *vals, ait_error *e);
static inline const tensor *map_keys(const tensor *t) { return &t->items[0]; }
static inline const tensor *map_vals(const tensor *t) { return &t->items[1]; }
/* "tensor", "sequence", "none" or "map". */
const char *val_kind_name(val_kind k);
/* Inserts a deep copy of item at position pos (0..n) of sequence t. */
ait_status seq_insert(tensor *t, int pos, const tensor *item, ait_error *e);
/* A deep copy (new owned storage). */
ait_status tensor_clone(const tensor *src, tensor **out, ait_error *e);
/* The same, a plain tensor's data (not strings) in a block of pool when one
 * fits (the smallest; its capacity the block's), else new storage as
 * tensor_clone's. pool may be NULL. */
ait_status tensor_clone_pooled(const tensor *src, struct block_pool *pool, tensor **out,
                               ait_error *e);
/* String tensors (AIT_STRING): data holds numel `char *`, each NULL (the
 * empty string) or a malloc'd NUL-terminated UTF-8 string. An owned string
 * tensor owns every non-NULL pointer in all cap / sizeof(char *) slots of
 * its buffer (slots past numel stay NULL): tensor_alloc (a reused buffer
 * starts all NULL), tensor_release and a dtype change into or out of string
 * (tensor_set_shape) keep that true, and tensor_copy_into copies deeply.
 * Ops write strings through these functions only, never by storing pointers
 * themselves (the executor's rule for element-moving ops: op.h). */
static inline const char *tensor_str(const tensor *t, int64_t i)
{
    const char *s = ((char *const *)t->data)[i];
    return s ? s : "";
}
/* Element i of owned string tensor t becomes a copy of s[0..len) (len 0:
 * the empty string, stored as NULL); the old string is freed. */
ait_status tensor_set_str(tensor *t, int64_t i, const char *s, size_t len, ait_error *e);
/* The same, taking s (malloc'd, or NULL) over. */
void tensor_put_str(tensor *t, int64_t i, char *s);
/* Copies n elements of dtype dt from src to dst; strings are duplicated,
 * freeing the strings dst's slots held (dst must own its slots). */
ait_status elems_copy(void *dst, const void *src, int64_t n, ait_dtype dt, ait_error *e);
/* For an owned string tensor whose slots hold pointers it does not own
 * (copied from other tensors): replaces each by its own copy. On failure the
 * slots not copied are NULL. */
ait_status tensor_own_strs(tensor *t, ait_error *e);
/* Forgets such borrowed pointers: every slot NULL, nothing freed. */
void tensor_drop_strs(tensor *t);

/* Formats "[2,3,4]" into buf. */
const char *shape_str(const int64_t *dims, int rank, char *buf, size_t n);

/* 64-byte aligned allocation, zeroed; freed with aligned_free. From
 * HUGE_MIN_BYTES on, 2 MiB aligned and in transparent huge pages where the
 * kernel allows (see tensor.c). */
#define HUGE_MIN_BYTES ((size_t)4 << 20)
void *aligned_zalloc(size_t bytes);
/* The same, not zeroed: pages the system gives fresh stay untouched (no
 * resident memory) until written. */
void *aligned_malloc(size_t bytes);
void aligned_free(void *p);

/* Element conversion: reads element i of a buffer of dtype t as double or
 * int64, or writes one (C conversions: float to int truncates, ints wrap).
 * For index and scalar handling and strided float access; bulk loops use
 * convert_elems / convert_floats. */
int64_t elem_get_i64(const void *data, ait_dtype t, int64_t i);
/* Writes v as element i of dt: floats as they are (the small float types
 * saturating); integers truncated toward zero and saturated at the type's
 * limits, NaN as 0; bool as v > 0. */
void elem_set_sat(void *d, ait_dtype t, int64_t i, double v);
static inline double elem_get_f64(const void *d, ait_dtype t, int64_t i)
{
    switch (t) {
    case AIT_F32: return ((const float *)d)[i];
    case AIT_F64: return ((const double *)d)[i];
    case AIT_F16: return f16_to_f32(((const uint16_t *)d)[i]);
    case AIT_BF16: return bf16_to_f32(((const uint16_t *)d)[i]);
    case AIT_I8: return ((const int8_t *)d)[i];
    case AIT_U8: return ((const uint8_t *)d)[i];
    case AIT_BOOL: return ((const uint8_t *)d)[i] != 0;
    case AIT_I16: return ((const int16_t *)d)[i];
    case AIT_U16: return ((const uint16_t *)d)[i];
    case AIT_I32: return ((const int32_t *)d)[i];
    case AIT_U32: return ((const uint32_t *)d)[i];
    case AIT_I64: return (double)((const int64_t *)d)[i];
    case AIT_U64: return (double)((const uint64_t *)d)[i];
    default: return dtype_is_small(t) ? small_to_f64(t, ((const uint8_t *)d)[i]) : 0;
    }
}
static inline void elem_set_f64(void *d, ait_dtype t, int64_t i, double v)
{
    switch (t) {
    case AIT_F32: ((float *)d)[i] = (float)v; break;
    case AIT_F64: ((double *)d)[i] = v; break;
    case AIT_F16: ((uint16_t *)d)[i] = f32_to_f16((float)v); break;
    case AIT_BF16: ((uint16_t *)d)[i] = f32_to_bf16((float)v); break;
    case AIT_BOOL: ((uint8_t *)d)[i] = v != 0; break;
    case AIT_I8: ((int8_t *)d)[i] = (int8_t)(int64_t)v; break;
    case AIT_U8: ((uint8_t *)d)[i] = (uint8_t)(int64_t)v; break;
    case AIT_I16: ((int16_t *)d)[i] = (int16_t)(int64_t)v; break;
    case AIT_U16: ((uint16_t *)d)[i] = (uint16_t)(int64_t)v; break;
    case AIT_I32: ((int32_t *)d)[i] = (int32_t)(int64_t)v; break;
    case AIT_U32: ((uint32_t *)d)[i] = (uint32_t)(int64_t)v; break;
    case AIT_I64: ((int64_t *)d)[i] = (int64_t)v; break;
    case AIT_U64: ((uint64_t *)d)[i] = (uint64_t)v; break;
    default:
        if (dtype_is_small(t)) ((uint8_t *)d)[i] = small_from_f64(t, v, NULL);
        break;
    }
}

/* Converts n elements between dtypes (the Cast op's semantics: float to int
 * truncates, to bool is != 0; into a small type as small_convert with Cast's
 * defaults). Fails only on unsupported types. */
ait_status convert_elems(const void *src, ait_dtype st, void *dst, ait_dtype dt, int64_t n,
                         ait_error *e);
/* The fast path of convert_elems for two float dtypes (float32, float64,
 * float16, bfloat16), with the same results; false (nothing written) for
 * any other pair. */
bool convert_floats(const void *src, ait_dtype st, void *dst, ait_dtype dt, int64_t n);

static inline bool dtype_is_float(ait_dtype t)
{
    return t == AIT_F32 || t == AIT_F64 || t == AIT_F16 || t == AIT_BF16;
}
static inline bool dtype_is_int(ait_dtype t)
{
    return t == AIT_I8 || t == AIT_U8 || t == AIT_I16 || t == AIT_U16 || t == AIT_I32 ||
           t == AIT_U32 || t == AIT_I64 || t == AIT_U64;
}
static inline bool dtype_is_signed(ait_dtype t)
{
    return t == AIT_I8 || t == AIT_I16 || t == AIT_I32 || t == AIT_I64 || dtype_is_float(t);
}

#endif
