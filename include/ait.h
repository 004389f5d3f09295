/* ait: ahead-of-time inference tuner. The one public header.
 *
 * Conventions: every fallible call returns an ait_status (AIT_OK == 0); the
 * message of the last failure (naming the file, node, op and reason) is read
 * with ait_model_error() / ait_session_error(), or, for calls that have no
 * handle yet, written into the caller's `ait_error` buffer when one is given.
 * Every create has a free, and every free accepts NULL.
 */
#ifndef AIT_H
#define AIT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AIT_VERSION_MAJOR 0
#define AIT_VERSION_MINOR 1
#define AIT_VERSION_PATCH 0
#define AIT_VERSION_STRING "0.1.0"

/* ---- status ------------------------------------------------------------ */
typedef enum ait_status {
    AIT_OK = 0,
    AIT_E_INVALID_ARG,  /* a caller passed something that cannot be right  */
    AIT_E_IO,           /* a file could not be opened, read or written       */
    AIT_E_PARSE,        /* a file is truncated or corrupt                    */
    AIT_E_UNSUPPORTED,  /* an op, domain, dtype or attribute ait lacks       */
    AIT_E_SHAPE,        /* shapes do not fit together                        */
    AIT_E_DTYPE,        /* a tensor has the wrong element type               */
    AIT_E_OVERFLOW,     /* a size computed from input does not fit           */
    AIT_E_NOMEM,        /* an allocation failed                              */
    AIT_E_NOT_FOUND,    /* a named input, output or file does not exist      */
    AIT_E_SECURITY,     /* a path leaves the folder it must stay in          */
    AIT_E_INTERNAL,     /* a bug in ait: please report it                    */
    AIT_STATUS_COUNT
} ait_status;

/* A short constant name for a status ("AIT_E_PARSE"); never NULL. */
const char *ait_status_string(ait_status s);

/* A caller-owned buffer that receives the message of a failure. */
typedef struct ait_error {
    ait_status code;
    char msg[1024];
} ait_error;

/* ---- element types (numbered as ONNX TensorProto.DataType) ------------- */
typedef enum ait_dtype {
    AIT_UNDEFINED = 0,
    AIT_F32 = 1,
    AIT_U8 = 2,
    AIT_I8 = 3,
    AIT_U16 = 4,
    AIT_I16 = 5,
    AIT_I32 = 6,
    AIT_I64 = 7,
    AIT_STRING = 8,
    AIT_BOOL = 9,
    AIT_F16 = 10,
    AIT_F64 = 11,
    AIT_U32 = 12,
    AIT_U64 = 13,
    AIT_BF16 = 16,
} ait_dtype;

/* "float32", "int64", ...; "undefined" for unknown values. */
const char *ait_dtype_name(ait_dtype t);
/* Bytes per element; 0 for types without a fixed size (string, undefined). */
size_t ait_dtype_size(ait_dtype t);

#define AIT_MAX_RANK 8

/* ---- tensors ----------------------------------------------------------- */
/* A dense row-major tensor. */
typedef struct ait_tensor ait_tensor;

/* A new tensor owning zeroed storage; NULL on a bad shape or no memory. */
ait_tensor *ait_tensor_create(ait_dtype t, int rank, const int64_t *dims);
/* A tensor over caller-owned memory (`data` must hold the whole tensor and
 * outlive the tensor). */
ait_tensor *ait_tensor_wrap(ait_dtype t, int rank, const int64_t *dims, void *data);
void ait_tensor_free(ait_tensor *t);
ait_dtype ait_tensor_dtype(const ait_tensor *t);
int ait_tensor_rank(const ait_tensor *t);
const int64_t *ait_tensor_dims(const ait_tensor *t);
int64_t ait_tensor_numel(const ait_tensor *t);
size_t ait_tensor_nbytes(const ait_tensor *t);
void *ait_tensor_data(ait_tensor *t);

/* ONNX sequence values (ordered lists of tensors of one element type) and
 * empty optionals travel as ait_tensor too. A sequence owns copies of its
 * items; ait_tensor_free frees them. Tensor accessors on a sequence or a
 * none report rank 0, no elements and no data. */
ait_tensor *ait_sequence_create(ait_dtype elem);
/* Appends a copy of item (a tensor of the sequence's element type). */
ait_status ait_sequence_append(ait_tensor *seq, const ait_tensor *item);
int ait_tensor_is_sequence(const ait_tensor *t);
int ait_sequence_length(const ait_tensor *t);
/* Item i of a sequence, owned by it; NULL when out of range. */
const ait_tensor *ait_sequence_item(const ait_tensor *t, int i);
/* An empty ONNX optional, and the test for one. */
ait_tensor *ait_tensor_none(void);
int ait_tensor_is_none(const ait_tensor *t);

/* .npy files: read a whole tensor; write one (atomically: temp + rename). */
ait_status ait_tensor_load_npy(const char *path, ait_tensor **out, ait_error *err);
ait_status ait_tensor_save_npy(const char *path, const ait_tensor *t, ait_error *err);

/* ---- models ------------------------------------------------------------ */
typedef struct ait_model ait_model;

/* Loads an ONNX file (and its external data, which must lie in the model's
 * folder). On failure *out is NULL and `err` (may be NULL) says why. */
ait_status ait_model_load(const char *path, ait_model **out, ait_error *err);
/* Loads a serialised ONNX model from memory (copied; `data` may be freed
 * after). `name` labels it in messages (may be NULL). External data is
 * refused, since there is no folder to find it in. */
ait_status ait_model_load_memory(const void *data, size_t len, const char *name, ait_model **out,
                                 ait_error *err);
void ait_model_free(ait_model *m);

/* A graph input or output as declared by the model: each dim is either a
 * number (>= 0) or symbolic, in which case dims[i] == -1 and sym[i] names
 * it ("batch", "seq") or is NULL when the model left it unnamed. */
typedef struct ait_value_info {
    const char *name;
    ait_dtype dtype;
    int rank;
    int64_t dims[AIT_MAX_RANK];
    const char *sym[AIT_MAX_RANK];
} ait_value_info;

int ait_model_input_count(const ait_model *m);
int ait_model_output_count(const ait_model *m);
/* Info of input / output i; the strings belong to the model. */
ait_status ait_model_input(const ait_model *m, int i, ait_value_info *out);
ait_status ait_model_output(const ait_model *m, int i, ait_value_info *out);
/* Number of nodes and the ONNX default-domain opset the model imports. */
int ait_model_node_count(const ait_model *m);
int ait_model_opset(const ait_model *m);

/* ---- sessions ---------------------------------------------------------- */
typedef struct ait_session ait_session;

typedef struct ait_session_options {
    int threads; /* 0: one per core */
} ait_session_options;

/* A session runs a model; the model must outlive it. `opts` may be NULL. */
ait_status ait_session_create(const ait_model *m, const ait_session_options *opts,
                              ait_session **out, ait_error *err);
void ait_session_free(ait_session *s);

/* Runs the model. `inputs[i]` is the tensor for model input i, in declared
 * order (caller-owned). On success `outputs[j]` receives a new tensor for
 * model output j that the caller frees with ait_tensor_free(). */
ait_status ait_session_run(ait_session *s, ait_tensor *const *inputs, int n_inputs,
                           ait_tensor **outputs, int n_outputs);
/* The message of the session's last failure ("" if none). */
const char *ait_session_error(const ait_session *s);

#ifdef __cplusplus
}
#endif
#endif /* AIT_H */
