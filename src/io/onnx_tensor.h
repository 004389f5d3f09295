/* Conversion of protobuf-c ONNX tensors (private to src/io). */
#ifndef AIT_IO_ONNX_TENSOR_H
#define AIT_IO_ONNX_TENSOR_H
#include "core/tensor.h"
#include "onnx.pb-c.h"

/* Whether tp keeps its data in an external file. */
bool tensor_proto_external(const Onnx__TensorProto *tp);
/* Whether tp is an initializer left out (ONNX_ABSENT_LOCATION): its "sha256"
 * entry ("" when it has none), else NULL. */
const char *tensor_proto_absent(const Onnx__TensorProto *tp);
/* A new tensor of tp's type and shape, checked, without data (NULL). */
ait_status tensor_shape_from_proto(const Onnx__TensorProto *tp, tensor **out, const char *what,
                                   ait_error *e);
/* A new tensor holding tp's data; `dir` is the real path of the model's
 * folder for external data (NULL refuses external data). */
ait_status tensor_from_proto(const Onnx__TensorProto *tp, const char *dir, tensor **out,
                             const char *what, ait_error *e);
/* The same, but tp's raw_data (onnx_read's borrow: the caller's buffer) not
 * copied where it may be borrowed (io/onnx.h): the tensor points at it. */
ait_status tensor_borrow_proto(const Onnx__TensorProto *tp, const char *dir, tensor **out,
                               const char *what, ait_error *e);
#endif
