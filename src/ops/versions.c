/* Every version of every op ait registers, as data: the since_versions of
 * each op (the opsets that changed it) and the highest version ait
 * implements. ops_bind (bind.c) resolves each node to the highest version
 * whose since_version is at most the model's opset and refuses versions
 * above `upto`.
 *
 * Source: the "### <a name="Op-N">" headings of the ONNX spec's Changelog.md
 * (onnx's docs/Changelog.md as of opset 28; the preview.training ops are
 * under "# ai.onnx.preview.training" there). To refresh for a new spec: list
 * the headings per domain and op (a few lines of Python over Changelog.md),
 * update `since` for the ops below, then read the new versions' entries and
 * raise `upto` only for those whose change ait already honours (see "Opsets
 * and op versions" in docs/runtime.md). unit_opsets fails when an op is
 * registered without a row here. */
#include <string.h>

#include "ops/op.h"

#define TRAINING "ai.onnx.preview.training"

/* .upto left 0: the highest since_version <= OP_VERSION_BASE, which is what
 * ait implemented before it checked op versions (opsets up to 21). Explicit
 * .upto: newer versions reviewed and marked (docs/runtime.md says why). */
static const op_versions table[] = {
    {.name = "Abs", .since = {1, 6, 13}},
    {.name = "Acos", .since = {7, 22}, .upto = 22},
    {.name = "Acosh", .since = {9, 22}, .upto = 22},
    {.name = "Add", .since = {1, 6, 7, 13, 14}},
    {.name = "And", .since = {1, 7}},
    {.name = "ArgMax", .since = {1, 11, 12, 13}},
    {.name = "ArgMin", .since = {1, 11, 12, 13}},
    {.name = "Asin", .since = {7, 22}, .upto = 22},
    {.name = "Asinh", .since = {9, 22}, .upto = 22},
    {.name = "Atan", .since = {7, 22}, .upto = 22},
    {.name = "Atanh", .since = {9, 22}, .upto = 22},
    {.name = "AveragePool", .since = {1, 7, 10, 11, 19, 22}, .upto = 22},
    {.name = "BatchNormalization", .since = {1, 6, 7, 9, 14, 15}},
    {.name = "BitShift", .since = {11}},
    {.name = "BitwiseAnd", .since = {18}},
    {.name = "BitwiseNot", .since = {18}},
    {.name = "BitwiseOr", .since = {18}},
    {.name = "BitwiseXor", .since = {18}},
    {.name = "BlackmanWindow", .since = {17}},
    {.name = "Cast", .since = {1, 6, 9, 13, 19, 21, 23, 24, 25}, .upto = 25},
    {.name = "CastLike", .since = {15, 19, 21, 23, 24, 25}, .upto = 25},
    {.name = "Ceil", .since = {1, 6, 13}},
    {.name = "Celu", .since = {12, 28}, .upto = 28},
    {.name = "Clip", .since = {1, 6, 11, 12, 13}},
    {.name = "Compress", .since = {9, 11}},
    {.name = "Concat", .since = {1, 4, 11, 13}},
    {.name = "ConcatFromSequence", .since = {11}},
    {.name = "Constant", .since = {1, 9, 11, 12, 13, 19, 21, 23, 24, 25}, .upto = 25},
    {.name = "ConstantOfShape", .since = {9, 20, 21, 23, 24, 25}, .upto = 25},
    {.name = "Conv", .since = {1, 11, 22}, .upto = 22},
    {.name = "ConvInteger", .since = {10}},
    {.name = "ConvTranspose", .since = {1, 11, 22}, .upto = 22},
    {.name = "Cos", .since = {7, 22}, .upto = 22},
    {.name = "Cosh", .since = {9, 22}, .upto = 22},
    {.name = "CumSum", .since = {11, 14}},
    {.name = "DFT", .since = {17, 20}},
    {.name = "DepthToSpace", .since = {1, 11, 13}},
    {.name = "DequantizeLinear", .since = {10, 13, 19, 21, 23, 24, 25}},
    {.name = "Det", .since = {11, 22}, .upto = 22},
    {.name = "Div", .since = {1, 6, 7, 13, 14}},
    {.name = "Dropout", .since = {1, 6, 7, 10, 12, 13, 22}, .upto = 22},
    {.name = "DynamicQuantizeLinear", .since = {11}},
    {.name = "Einsum", .since = {12}},
    {.name = "Elu", .since = {1, 6, 22}, .upto = 22},
    {.name = "Equal", .since = {1, 7, 11, 13, 19}},
    {.name = "Erf", .since = {9, 13}},
    {.name = "Exp", .since = {1, 6, 13}},
    {.name = "Expand", .since = {8, 13}},
    {.name = "EyeLike", .since = {9, 22}, .upto = 22},
    {.name = "Flatten", .since = {1, 9, 11, 13, 21, 23, 24, 25}, .upto = 25},
    {.name = "Floor", .since = {1, 6, 13}},
    {.name = "GRU", .since = {1, 3, 7, 14, 22}, .upto = 22},
    {.name = "Gather", .since = {1, 11, 13}},
    {.name = "GatherElements", .since = {11, 13}},
    {.name = "GatherND", .since = {11, 12, 13}},
    {.name = "Gelu", .since = {20}},
    {.name = "Gemm", .since = {1, 6, 7, 9, 11, 13}},
    {.name = "GlobalAveragePool", .since = {1, 22}, .upto = 22},
    {.name = "GlobalLpPool", .since = {1, 2, 22}, .upto = 22},
    {.name = "GlobalMaxPool", .since = {1, 22}, .upto = 22},
    {.name = "Greater", .since = {1, 7, 9, 13}},
    {.name = "GreaterOrEqual", .since = {12, 16}},
    {.name = "GridSample", .since = {16, 20, 22}, .upto = 22},
    {.name = "GroupNormalization", .since = {18, 21}},
    {.name = "HammingWindow", .since = {17}},
    {.name = "HannWindow", .since = {17}},
    {.name = "HardSigmoid", .since = {1, 6, 22}, .upto = 22},
    {.name = "HardSwish", .since = {14, 22}, .upto = 22},
    {.name = "Hardmax", .since = {1, 11, 13}},
    {.name = "Identity", .since = {1, 13, 14, 16, 19, 21, 23, 24, 25}, .upto = 25},
    {.name = "If", .since = {1, 11, 13, 16, 19, 21, 23, 24, 25}, .upto = 25},
    {.name = "ImageDecoder", .since = {20}},
    {.name = "InstanceNormalization", .since = {1, 6, 22}, .upto = 22},
    {.name = "IsInf", .since = {10, 20}},
    {.name = "IsNaN", .since = {9, 13, 20}},
    {.name = "LRN", .since = {1, 13}},
    {.name = "LSTM", .since = {1, 7, 14, 22}, .upto = 22},
    {.name = "LayerNormalization", .since = {17}},
    {.name = "LeakyRelu", .since = {1, 6, 16}},
    {.name = "Less", .since = {1, 7, 9, 13}},
    {.name = "LessOrEqual", .since = {12, 16}},
    {.name = "Log", .since = {1, 6, 13}},
    {.name = "LogSoftmax", .since = {1, 11, 13}},
    {.name = "Loop", .since = {1, 11, 13, 16, 19, 21, 23, 24, 25}, .upto = 25},
    {.name = "LpPool", .since = {1, 2, 11, 18, 22}, .upto = 22},
    {.name = "MatMul", .since = {1, 9, 13}},
    {.name = "MatMulInteger", .since = {10}},
    {.name = "Max", .since = {1, 6, 8, 12, 13}},
    {.name = "MaxPool", .since = {1, 8, 10, 11, 12, 22}, .upto = 22},
    {.name = "MaxUnpool", .since = {9, 11, 22}, .upto = 22},
    {.name = "Mean", .since = {1, 6, 8, 13}},
    {.name = "MeanVarianceNormalization", .since = {9, 13}},
    {.name = "MelWeightMatrix", .since = {17}},
    {.name = "Min", .since = {1, 6, 8, 12, 13}},
    {.name = "Mish", .since = {18, 22}, .upto = 22},
    {.name = "Mod", .since = {10, 13}},
    {.name = "Mul", .since = {1, 6, 7, 13, 14}},
    {.name = "Neg", .since = {1, 6, 13}},
    {.name = "NegativeLogLikelihoodLoss", .since = {12, 13, 22}, .upto = 22},
    {.name = "NonMaxSuppression", .since = {10, 11}},
    {.name = "NonZero", .since = {9, 13}},
    {.name = "Not", .since = {1}},
    {.name = "OneHot", .since = {9, 11}},
    {.name = "Optional", .since = {15}},
    {.name = "OptionalGetElement", .since = {15, 18}},
    {.name = "OptionalHasElement", .since = {15, 18}},
    {.name = "Or", .since = {1, 7}},
    {.name = "PRelu", .since = {1, 6, 7, 9, 16}},
    {.name = "Pad", .since = {1, 2, 11, 13, 18, 19, 21, 23, 24, 25}, .upto = 25},
    {.name = "Pow", .since = {1, 7, 12, 13, 15}},
    {.name = "QLinearConv", .since = {10}},
    {.name = "QLinearMatMul", .since = {10, 21}},
    {.name = "QuantizeLinear", .since = {10, 13, 19, 21, 23, 24, 25}},
    {.name = "RNN", .since = {1, 7, 14, 22}, .upto = 22},
    {.name = "Range", .since = {11, 27}, .upto = 27},
    {.name = "Reciprocal", .since = {1, 6, 13}},
    {.name = "ReduceL1", .since = {1, 11, 13, 18}},
    {.name = "ReduceL2", .since = {1, 11, 13, 18}},
    {.name = "ReduceLogSum", .since = {1, 11, 13, 18}},
    {.name = "ReduceLogSumExp", .since = {1, 11, 13, 18}},
    {.name = "ReduceMax", .since = {1, 11, 12, 13, 18, 20}},
    {.name = "ReduceMean", .since = {1, 11, 13, 18}},
    {.name = "ReduceMin", .since = {1, 11, 12, 13, 18, 20}},
    {.name = "ReduceProd", .since = {1, 11, 13, 18}},
    {.name = "ReduceSum", .since = {1, 11, 13}},
    {.name = "ReduceSumSquare", .since = {1, 11, 13, 18}},
    {.name = "Relu", .since = {1, 6, 13, 14}},
    {.name = "Reshape", .since = {1, 5, 13, 14, 19, 21, 23, 24, 25}, .upto = 25},
    {.name = "Resize", .since = {10, 11, 13, 18, 19}},
    {.name = "ReverseSequence", .since = {10}},
    {.name = "RoiAlign", .since = {10, 16, 22}, .upto = 22},
    {.name = "Round", .since = {11, 22}, .upto = 22},
    {.name = "STFT", .since = {17}},
    {.name = "Scan", .since = {8, 9, 11, 16, 19, 21, 23, 24, 25}, .upto = 25},
    {.name = "Scatter", .since = {9, 11}},
    {.name = "ScatterElements", .since = {11, 13, 16, 18}},
    {.name = "ScatterND", .since = {11, 13, 16, 18}},
    {.name = "Selu", .since = {1, 6, 22}, .upto = 22},
    {.name = "SequenceAt", .since = {11}},
    {.name = "SequenceConstruct", .since = {11}},
    {.name = "SequenceEmpty", .since = {11}},
    {.name = "SequenceErase", .since = {11}},
    {.name = "SequenceInsert", .since = {11}},
    {.name = "SequenceLength", .since = {11}},
    {.name = "SequenceMap", .since = {17}},
    {.name = "Shape", .since = {1, 13, 15, 19, 21, 23, 24, 25}, .upto = 25},
    {.name = "Shrink", .since = {9}},
    {.name = "Sigmoid", .since = {1, 6, 13}},
    {.name = "Sign", .since = {9, 13}},
    {.name = "Sin", .since = {7, 22}, .upto = 22},
    {.name = "Sinh", .since = {9, 22}, .upto = 22},
    {.name = "Size", .since = {1, 13, 19, 21, 23, 24, 25}, .upto = 25},
    {.name = "Slice", .since = {1, 10, 11, 13}},
    {.name = "Softmax", .since = {1, 11, 13}},
    {.name = "SoftmaxCrossEntropyLoss", .since = {12, 13}},
    {.name = "Softplus", .since = {1, 22}, .upto = 22},
    {.name = "Softsign", .since = {1, 22}, .upto = 22},
    {.name = "SpaceToDepth", .since = {1, 13}},
    {.name = "Split", .since = {1, 2, 11, 13, 18}},
    {.name = "SplitToSequence", .since = {11, 24}, .upto = 24},
    {.name = "Sqrt", .since = {1, 6, 13}},
    {.name = "Squeeze", .since = {1, 11, 13, 21, 23, 24, 25}, .upto = 25},
    {.name = "Sub", .since = {1, 6, 7, 13, 14}},
    {.name = "Sum", .since = {1, 6, 8, 13}},
    {.name = "Tan", .since = {7, 22}, .upto = 22},
    {.name = "Tanh", .since = {1, 6, 13}},
    {.name = "TfIdfVectorizer", .since = {9}},
    {.name = "ThresholdedRelu", .since = {10, 22}, .upto = 22},
    {.name = "Tile", .since = {1, 6, 13}},
    {.name = "TopK", .since = {1, 10, 11, 24}, .upto = 24},
    {.name = "Transpose", .since = {1, 13, 21, 23, 24, 25}, .upto = 25},
    {.name = "Trilu", .since = {14}},
    {.name = "Unique", .since = {11}},
    {.name = "Unsqueeze", .since = {1, 11, 13, 21, 23, 24, 25}, .upto = 25},
    {.name = "Upsample", .since = {1, 7, 9, 10}},
    {.name = "Where", .since = {9, 16}},
    {.name = "Xor", .since = {1, 7}},
    {.domain = TRAINING, .name = "Adagrad", .since = {1}},
    {.domain = TRAINING, .name = "Adam", .since = {1}},
    {.domain = TRAINING, .name = "Momentum", .since = {1}},
};

const op_versions *op_versions_find(const char *domain, const char *name)
{
    if (onnx_domain_default(domain)) domain = "";
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].name, name) == 0 &&
            strcmp(table[i].domain ? table[i].domain : "", domain) == 0)
            return &table[i];
    return NULL;
}

int op_version_resolve(const op_versions *v, int opset)
{
    int best = 0;
    for (int i = 0; i < OP_MAX_VERSIONS && v->since[i]; i++)
        if (v->since[i] <= opset) best = v->since[i];
    return best;
}

int op_version_upto(const op_versions *v)
{
    return v->upto ? v->upto : op_version_resolve(v, OP_VERSION_BASE);
}
