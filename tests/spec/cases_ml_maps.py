"""The ai.onnx.ml ops on maps: ZipMap (the end of scikit-learn classifiers as
skl2onnx exports them: label plus probabilities, the probabilities zipped
into one map per row), DictVectorizer and CastMap. Classifier graphs are
laid out as skl2onnx builds them, with the expected maps from scikit-learn's
predict_proba; the rest from the spec's semantics computed here."""
import numpy as np
from onnx import helper
from sklearn.ensemble import RandomForestClassifier
from sklearn.feature_extraction import DictVectorizer
from sklearn.linear_model import LogisticRegression

from cases_ml import classifier
from spec_case import Map, MapSeq, case

ML = "ai.onnx.ml"


def ml(name, nodes, inputs, outputs):
    case(name, nodes, inputs, outputs, opset=17, extra_opsets=[(ML, 1)])


def node(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, domain=ML, **attrs)


def maps(probs, labels):
    return MapSeq([Map(labels, row) for row in probs.astype(np.float32)],
                  like=Map(labels, [0.0] * len(labels)))


rng = np.random.default_rng(11)
X = (rng.integers(0, 8, (60, 3)) * 0.25 + rng.random((60, 3)) * 0.1).astype(np.float32)
Xt = (rng.integers(0, 8, (7, 3)) * 0.25 + 0.05).astype(np.float32)
y3 = (X[:, 0] + X[:, 1] > 1.75).astype(int) + (X[:, 2] > 1.0).astype(int)

# ---- ZipMap after a classifier, as skl2onnx lays it out ------------------------
# LogisticRegression: LinearClassifier (SOFTMAX), Normalizer L1, ZipMap.
lr = LogisticRegression(multi_class="multinomial", max_iter=500).fit(X, y3)
ml("ml_zipmap_logistic_regression",
   [node("LinearClassifier", ["X"], ["label", "probability_tensor"], multi_class=1,
         post_transform="SOFTMAX", coefficients=[float(v) for v in lr.coef_.ravel()],
         intercepts=[float(v) for v in lr.intercept_], classlabels_ints=[0, 1, 2]),
    node("Normalizer", ["probability_tensor"], ["probabilities"], norm="L1"),
    node("ZipMap", ["probabilities"], ["output_probability"], classlabels_int64s=[0, 1, 2])],
   {"X": Xt}, {"label": lr.predict(Xt).astype(np.int64),
               "output_probability": maps(lr.predict_proba(Xt), [0, 1, 2])})

# RandomForestClassifier: TreeEnsembleClassifier (averaged leaf
# probabilities), Normalizer L1, ZipMap.
rf = RandomForestClassifier(n_estimators=4, max_depth=3, random_state=0).fit(X, y3)
ml("ml_zipmap_random_forest",
   [node("TreeEnsembleClassifier", ["X"], ["label", "probability_tensor"],
         **classifier(rf.estimators_, 3, 1 / 4)),
    node("Normalizer", ["probability_tensor"], ["probabilities"], norm="L1"),
    node("ZipMap", ["probabilities"], ["output_probability"], classlabels_int64s=[0, 1, 2])],
   {"X": Xt}, {"label": rf.predict(Xt).astype(np.int64),
               "output_probability": maps(rf.predict_proba(Xt), [0, 1, 2])})

# ---- ZipMap alone -----------------------------------------------------------------
p = rng.random((4, 3)).astype(np.float32)
names = ["cat", "dog", ""]  # the empty string is a label like any other
ml("ml_zipmap_strings", node("ZipMap", ["X"], ["Z"], classlabels_strings=names),
   {"X": p}, {"Z": maps(p, names)})
ml("ml_zipmap_int64_labels_unordered", node("ZipMap", ["X"], ["Z"], classlabels_int64s=[7, -2, 30]),
   {"X": p}, {"Z": maps(p, [7, -2, 30])})
ml("ml_zipmap_one_row_1d", node("ZipMap", ["X"], ["Z"], classlabels_int64s=[1, 2, 3]),
   {"X": p[0]}, {"Z": maps(p[:1], [1, 2, 3])})
ml("ml_zipmap_no_rows", node("ZipMap", ["X"], ["Z"], classlabels_strings=["a", "b", "c"]),
   {"X": np.zeros((0, 3), np.float32)},
   {"Z": MapSeq([], like=Map(["a"], [0.0]))})

# ---- DictVectorizer -----------------------------------------------------------------
# The spec's example: vocabulary [a, c, b, z], {a: 4, c: 8} -> [4, 8, 0, 0].
ml("ml_dictvectorizer_spec_example",
   node("DictVectorizer", ["X"], ["Y"], string_vocabulary=["a", "c", "b", "z"]),
   {"X": Map(["a", "c"], [4.0, 8.0])}, {"Y": np.array([[4, 8, 0, 0]], np.float32)})
# scikit-learn's DictVectorizer: vocabulary = feature_names_; a feature not
# seen in training is dropped, as in its transform.
dv = DictVectorizer(sparse=False).fit([{"x": 1.0, "y": 2.0}, {"z": 3.0, "w": 0.5}])
d = {"z": 1.5, "x": -2.0, "unseen": 9.0}
ml("ml_dictvectorizer_sklearn_double",
   node("DictVectorizer", ["X"], ["Y"], string_vocabulary=list(dv.feature_names_)),
   {"X": Map(list(d), list(d.values()), np.float64)},
   {"Y": dv.transform([d]).astype(np.float64)})
ml("ml_dictvectorizer_int64_keys_float",
   node("DictVectorizer", ["X"], ["Y"], int64_vocabulary=[10, 20, 30, 40, 50]),
   {"X": Map([40, 10, 50], [1.5, -2.0, 3.25])},
   {"Y": np.array([[-2.0, 0, 0, 1.5, 3.25]], np.float32)})
ml("ml_dictvectorizer_string_keys_int64",
   node("DictVectorizer", ["X"], ["Y"], string_vocabulary=["b", "a"]),
   {"X": Map(["a", "b"], [7, -3], np.int64)}, {"Y": np.array([[-3, 7]], np.int64)})
ml("ml_dictvectorizer_int64_keys_string",
   node("DictVectorizer", ["X"], ["Y"], int64_vocabulary=[3, 1, 2]),
   {"X": Map([1, 2], ["one", "two"], object)},
   {"Y": np.array([["", "one", "two"]], object)})

# ---- CastMap: values in ascending key order ------------------------------------------
fm = Map([5, 2, 9, 0], [0.5, -1.25, 3.0, 7.75])
order = [0.5, -1.25, 3.0, 7.75]
srt = [v for _, v in sorted(zip(fm.keys, order))]
ml("ml_castmap_dense_float", node("CastMap", ["X"], ["Y"]),
   {"X": fm}, {"Y": np.array([srt], np.float32)})
ml("ml_castmap_dense_int64", node("CastMap", ["X"], ["Y"], cast_to="TO_INT64"),
   {"X": fm}, {"Y": np.array([srt], np.float32).astype(np.int64)})
ml("ml_castmap_sparse_float",
   node("CastMap", ["X"], ["Y"], map_form="SPARSE", max_map=12),
   {"X": fm}, {"Y": np.array([[7.75, 0, -1.25, 0, 0, 0.5, 0, 0, 0, 3.0, 0, 0]], np.float32)})
ml("ml_castmap_float_to_string", node("CastMap", ["X"], ["Y"], cast_to="TO_STRING"),
   {"X": fm}, {"Y": np.array([["%f" % v for v in srt]], object)})
sm = Map([3, 1], ["2.5", "-4"], object)
ml("ml_castmap_string_to_float", node("CastMap", ["X"], ["Y"], cast_to="TO_FLOAT"),
   {"X": sm}, {"Y": np.array([[-4.0, 2.5]], np.float32)})
ml("ml_castmap_string_sparse",
   node("CastMap", ["X"], ["Y"], cast_to="TO_STRING", map_form="SPARSE", max_map=4),
   {"X": sm}, {"Y": np.array([["0.f", "-4", "0.f", "2.5"]], object)})

# ---- empty maps ---------------------------------------------------------------------
ml("ml_castmap_empty_map", node("CastMap", ["X"], ["Y"]),
   {"X": Map([], [])}, {"Y": np.zeros((1, 0), np.float32)})
ml("ml_castmap_empty_map_sparse", node("CastMap", ["X"], ["Y"], map_form="SPARSE", max_map=3),
   {"X": Map([], [])}, {"Y": np.zeros((1, 3), np.float32)})
ml("ml_dictvectorizer_empty_map",
   node("DictVectorizer", ["X"], ["Y"], int64_vocabulary=[4, 2]),
   {"X": Map([], [])}, {"Y": np.zeros((1, 2), np.float32)})
