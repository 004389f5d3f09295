"""The ai.onnx.ml domain (ml opsets 1 to 5). Most cases are small
scikit-learn models trained here on a fixed dataset, turned into ONNX nodes
from the fitted attributes (tree_.children_left, coef_, dual_coef_...) the
way skl2onnx lays them out, with the expected outputs from scikit-learn's
own predict / predict_proba / decision_function / transform; then the
spec's examples (Operators-ml.md) and cases computed with numpy (TreeEnsemble
5's aggregate functions and set membership, post transforms...)."""
import numpy as np
from onnx import TensorProto, helper, numpy_helper
from sklearn.ensemble import (GradientBoostingClassifier, GradientBoostingRegressor,
                              RandomForestClassifier, RandomForestRegressor)
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from spec_case import case

ML = "ai.onnx.ml"
OPSET = 17  # the default-domain opset the ml cases are stamped with


def ml(name, node, inputs, outputs, ml_opset):
    case(name, node, inputs, outputs, opset=OPSET, extra_opsets=[(ML, ml_opset)])


def node(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, domain=ML, **attrs)


def dtensor(name, a):
    return numpy_helper.from_array(np.asarray(a, np.float64), name)


# ---- the dataset: 3 features on a grid (no value sits on a split point) ---
rng = np.random.default_rng(5)
X = (rng.integers(0, 8, (40, 3)) + rng.integers(0, 4, (40, 3)) * 0.25).astype(np.float32)
Xt = (rng.integers(0, 8, (12, 3)) + 0.125).astype(np.float32)  # test rows
y_reg = (X[:, 0] * 1.5 - X[:, 1] + 0.3 * X[:, 2] ** 2).astype(np.float64)
y3 = ((X[:, 0] + X[:, 1] > 7).astype(int) + (X[:, 2] > 4).astype(int))  # 3 classes
y2 = (X[:, 0] - X[:, 2] > 0.5).astype(int)


# ---- trees -----------------------------------------------------------------

def tree_nodes(trees, values_as_tensor=False):
    """nodes_* attributes of fitted sklearn trees (x <= threshold goes left,
    the true branch), plus the leaves (tree id, node id, node) in order."""
    a = {k: [] for k in ("nodes_treeids", "nodes_nodeids", "nodes_featureids", "nodes_modes",
                         "nodes_values", "nodes_truenodeids", "nodes_falsenodeids")}
    leaves = []
    for t, tree in enumerate(trees):
        tr = tree.tree_
        for i in range(tr.node_count):
            leaf = tr.children_left[i] < 0
            a["nodes_treeids"].append(t)
            a["nodes_nodeids"].append(i)
            a["nodes_featureids"].append(0 if leaf else int(tr.feature[i]))
            a["nodes_modes"].append("LEAF" if leaf else "BRANCH_LEQ")
            a["nodes_values"].append(0.0 if leaf else float(tr.threshold[i]))
            a["nodes_truenodeids"].append(0 if leaf else int(tr.children_left[i]))
            a["nodes_falsenodeids"].append(0 if leaf else int(tr.children_right[i]))
            if leaf:
                leaves.append((t, i, tr.value[i]))
    if values_as_tensor:
        a["nodes_values_as_tensor"] = dtensor("nodes_values_as_tensor", a.pop("nodes_values"))
    return a


def regressor(trees, scale, base=None, agg=None, as_tensor=False):
    a = tree_nodes(trees, as_tensor)
    w = [float(v[0][0]) * scale for _, _, v in leaves_of(trees)]
    lv = leaves_of(trees)
    a.update(target_treeids=[t for t, _, _ in lv], target_nodeids=[i for _, i, _ in lv],
             target_ids=[0] * len(lv), n_targets=1)
    if as_tensor:
        a["target_weights_as_tensor"] = dtensor("target_weights_as_tensor", w)
    else:
        a["target_weights"] = w
    if base is not None:
        a["base_values"] = [float(base)]
    if agg:
        a["aggregate_function"] = agg
    return a


def leaves_of(trees):
    out = []
    for t, tree in enumerate(trees):
        tr = tree.tree_
        out += [(t, i, tr.value[i]) for i in range(tr.node_count) if tr.children_left[i] < 0]
    return out


def classifier(trees, n_classes, scale, binary=False):
    """Class weights: the leaf's class probabilities times scale. Binary: one
    weight per leaf, the second class's probability, under class id 0 (the
    one scored class is the positive one, as ONNX Runtime reads it)."""
    a = tree_nodes(trees)
    ids, tid, nid, w = [], [], [], []
    for t, i, v in leaves_of(trees):
        p = v[0] / v[0].sum()
        for k in ([1] if binary else range(n_classes)):
            tid.append(t)
            nid.append(i)
            ids.append(0 if binary else k)
            w.append(float(p[k]) * scale)
    a.update(class_treeids=tid, class_nodeids=nid, class_ids=ids, class_weights=w,
             classlabels_int64s=list(range(n_classes)))
    return a


dt = DecisionTreeRegressor(max_depth=4, random_state=0).fit(X, y_reg)
for v in (1, 3):
    ml(f"ml_tree_regressor_dt_v{v}", node("TreeEnsembleRegressor", ["X"], ["Y"],
                                          **regressor([dt], 1.0, as_tensor=v == 3)),
       {"X": Xt}, {"Y": dt.predict(Xt).astype(np.float32).reshape(-1, 1)}, v)
rf = RandomForestRegressor(n_estimators=4, max_depth=3, random_state=0).fit(X, y_reg)
est = list(rf.estimators_)
ml("ml_tree_regressor_rf_sum", node("TreeEnsembleRegressor", ["X"], ["Y"],
                                    **regressor(est, 1 / len(est))),
   {"X": Xt}, {"Y": rf.predict(Xt).astype(np.float32).reshape(-1, 1)}, 3)
ml("ml_tree_regressor_rf_average", node("TreeEnsembleRegressor", ["X"], ["Y"],
                                        **regressor(est, 1.0, agg="AVERAGE")),
   {"X": Xt}, {"Y": rf.predict(Xt).astype(np.float32).reshape(-1, 1)}, 1)
ml("ml_tree_regressor_rf_double_input", node("TreeEnsembleRegressor", ["X"], ["Y"],
                                             **regressor(est, 1.0, agg="AVERAGE")),
   {"X": Xt.astype(np.float64)}, {"Y": rf.predict(Xt).astype(np.float32).reshape(-1, 1)}, 3)
gb = GradientBoostingRegressor(n_estimators=5, max_depth=2, learning_rate=0.5,
                               random_state=0).fit(X, y_reg)
ml("ml_tree_regressor_gb", node("TreeEnsembleRegressor", ["X"], ["Y"],
                                **regressor([e[0] for e in gb.estimators_], gb.learning_rate,
                                            base=gb.init_.constant_[0][0])),
   {"X": Xt}, {"Y": gb.predict(Xt).astype(np.float32).reshape(-1, 1)}, 3)

dc = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y3)
ml("ml_tree_classifier_dt", node("TreeEnsembleClassifier", ["X"], ["Y", "Z"],
                                 **classifier([dc], 3, 1.0)),
   {"X": Xt}, {"Y": dc.predict(Xt).astype(np.int64),
               "Z": dc.predict_proba(Xt).astype(np.float32)}, 1)
rfc = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X, y3)
ml("ml_tree_classifier_rf", node("TreeEnsembleClassifier", ["X"], ["Y", "Z"],
                                 **classifier(rfc.estimators_, 3, 1 / 5)),
   {"X": Xt}, {"Y": rfc.predict(Xt).astype(np.int64),
               "Z": rfc.predict_proba(Xt).astype(np.float32)}, 3)
rfb = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=1).fit(X, y2)
ml("ml_tree_classifier_rf_binary", node("TreeEnsembleClassifier", ["X"], ["Y", "Z"],
                                        **classifier(rfb.estimators_, 2, 1 / 5, binary=True)),
   {"X": Xt}, {"Y": rfb.predict(Xt).astype(np.int64),
               "Z": rfb.predict_proba(Xt).astype(np.float32)}, 3)
ml("ml_tree_classifier_rf_binary_both", node("TreeEnsembleClassifier", ["X"], ["Y", "Z"],
                                             **classifier(rfb.estimators_, 2, 1 / 5)),
   {"X": Xt}, {"Y": rfb.predict(Xt).astype(np.int64),
               "Z": rfb.predict_proba(Xt).astype(np.float32)}, 3)

# Gradient boosting classifiers: raw scores plus the prior (base_values),
# LOGISTIC for two classes (one score: class id 0), SOFTMAX for three.
gbb = GradientBoostingClassifier(n_estimators=4, max_depth=2, random_state=0).fit(X, y2)
a = tree_nodes([e[0] for e in gbb.estimators_])
lv = leaves_of([e[0] for e in gbb.estimators_])
a.update(class_treeids=[t for t, _, _ in lv], class_nodeids=[i for _, i, _ in lv],
         class_ids=[0] * len(lv), class_weights=[float(v[0][0]) * gbb.learning_rate for _, _, v in lv],
         classlabels_int64s=[0, 1], base_values=[float(gbb._raw_predict_init(Xt[:1])[0][0])],
         post_transform="LOGISTIC")
ml("ml_tree_classifier_gb_binary_logistic", node("TreeEnsembleClassifier", ["X"], ["Y", "Z"], **a),
   {"X": Xt}, {"Y": gbb.predict(Xt).astype(np.int64),
               "Z": gbb.predict_proba(Xt).astype(np.float32)}, 3)
gbm = GradientBoostingClassifier(n_estimators=3, max_depth=2, random_state=0).fit(X, y3)
trees = [gbm.estimators_[s][k] for s in range(3) for k in range(3)]
a = tree_nodes(trees)
ids, tid, nid, w = [], [], [], []
for t, tr in enumerate(trees):
    for i in range(tr.tree_.node_count):
        if tr.tree_.children_left[i] < 0:
            tid.append(t)
            nid.append(i)
            ids.append(t % 3)
            w.append(float(tr.tree_.value[i][0][0]) * gbm.learning_rate)
a.update(class_treeids=tid, class_nodeids=nid, class_ids=ids, class_weights=w,
         classlabels_int64s=[0, 1, 2], base_values=[float(v) for v in gbm._raw_predict_init(Xt[:1])[0]],
         post_transform="SOFTMAX")
ml("ml_tree_classifier_gb_softmax", node("TreeEnsembleClassifier", ["X"], ["Y", "Z"], **a),
   {"X": Xt}, {"Y": gbm.predict(Xt).astype(np.int64),
               "Z": gbm.predict_proba(Xt).astype(np.float32)}, 3)
# Labels other than 0..n-1, and int64 input.
ml("ml_tree_classifier_labels_int_input", node("TreeEnsembleClassifier", ["X"], ["Y", "Z"],
                                               **dict(classifier([dc], 3, 1.0),
                                                      classlabels_int64s=[10, 20, 7])),
   {"X": np.floor(Xt).astype(np.int64)},
   {"Y": np.array([10, 20, 7])[dc.predict(np.floor(Xt))].astype(np.int64),
    "Z": dc.predict_proba(np.floor(Xt)).astype(np.float32)}, 1)


# ---- TreeEnsemble 5 ---------------------------------------------------------

def te5_eval(x, a, dtype=np.float32):
    """TreeEnsemble 5 in numpy: walk each row down each tree (x, the splits,
    sets and weights as dtype, compared in double)."""
    x = x.astype(dtype).astype(np.float64)
    a = dict(a, splits=np.array(a["splits"], dtype).astype(np.float64),
             lw=np.array(a["lw"], dtype).astype(np.float64),
             members=np.array(a.get("members", []), dtype).astype(np.float64))
    modes = a["modes"]
    sets, it = [], iter(a["members"])
    for m in modes:
        if m == 6:
            s = []
            for v in it:
                if np.isnan(v):
                    break
                s.append(v)
            sets.append(s)
        else:
            sets.append(None)
    nt = a["n_targets"]
    agg = a.get("agg", 1)
    out = np.zeros((x.shape[0], nt))
    for r in range(x.shape[0]):
        vals = [[] for _ in range(nt)]
        for root in a["roots"]:
            i, leaf = root, False
            while not leaf:
                v = x[r, a["feat"][i]]
                m, s = modes[i], a["splits"][i]
                if np.isnan(v) and a.get("nan", [0] * len(modes))[i]:
                    go = True
                else:
                    go = [v <= s, v < s, v >= s, v > s, v == s, v != s,
                          sets[i] is not None and v in sets[i]][m]
                i, leaf = ((a["tid"][i], a["tleaf"][i]) if go else (a["fid"][i], a["fleaf"][i]))
            vals[a["ltarget"][i]].append(a["lw"][i])
        for k in range(nt):
            v = vals[k]
            if not v:
                continue
            out[r, k] = [np.sum(v) / len(a["roots"]), np.sum(v), np.min(v), np.max(v)][agg]
    return out


def te5_node(a, dtype):
    t = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE,
         np.float16: TensorProto.FLOAT16}[dtype]
    kw = dict(n_targets=a["n_targets"], aggregate_function=a.get("agg", 1),
              post_transform=a.get("post", 0), tree_roots=a["roots"],
              nodes_modes=helper.make_tensor("nodes_modes", TensorProto.UINT8, (len(a["modes"]),),
                                             np.array(a["modes"], np.uint8)),
              nodes_featureids=a["feat"],
              nodes_splits=numpy_helper.from_array(np.array(a["splits"], dtype), "nodes_splits"),
              nodes_truenodeids=a["tid"], nodes_trueleafs=a["tleaf"],
              nodes_falsenodeids=a["fid"], nodes_falseleafs=a["fleaf"],
              leaf_targetids=a["ltarget"],
              leaf_weights=numpy_helper.from_array(np.array(a["lw"], dtype), "leaf_weights"))
    if "members" in a:
        kw["membership_values"] = numpy_helper.from_array(np.array(a["members"], dtype),
                                                          "membership_values")
    if "nan" in a:
        kw["nodes_missing_value_tracks_true"] = a["nan"]
    return node("TreeEnsemble", ["X"], ["Y"], **kw)


# The spec's two examples.
ex_member = dict(n_targets=4, roots=[0], modes=[0, 6, 6], feat=[0, 0, 0],
                 splits=[11, 232344.0, np.nan], tid=[1, 0, 1], tleaf=[0, 1, 1],
                 fid=[2, 2, 3], fleaf=[1, 0, 1], ltarget=[0, 1, 2, 3], lw=[1, 10, 1000, 100],
                 members=[1.2, 3.7, 8, 9, np.nan, 12, 7, np.nan])
xm = np.array([1.2, 3.4, -0.12, np.nan, 12, 7], np.float32).reshape(-1, 1)
ym = np.array([[1, 0, 0, 0], [0, 0, 0, 100], [0, 0, 0, 100], [0, 0, 1000, 0], [0, 0, 1000, 0],
               [0, 10, 0, 0]], np.float32)
assert np.array_equal(te5_eval(xm, ex_member), ym)
ml("ml_tree_ensemble_set_membership", te5_node(ex_member, np.float32), {"X": xm}, {"Y": ym}, 5)
ex_single = dict(n_targets=2, roots=[0], modes=[0, 0, 0], feat=[0, 0, 0], splits=[3.14, 1.2, 4.2],
                 tid=[1, 0, 1], tleaf=[0, 1, 1], fid=[2, 2, 3], fleaf=[0, 1, 1],
                 ltarget=[0, 1, 0, 1], lw=[5.23, 12.12, -12.23, 7.21])
xs = np.array([1.2, 3.4, -0.12, 1.66, 4.14, 1.77], np.float64).reshape(3, 2)
ys = np.array([[5.23, 0], [5.23, 0], [0, 12.12]], np.float64)
assert np.allclose(te5_eval(xs, ex_single, np.float64), ys)
ml("ml_tree_ensemble_single_tree", te5_node(ex_single, np.float64), {"X": xs}, {"Y": ys}, 5)

# Two trees sharing targets, every mode, a member set, NaN tracking; each
# aggregate function, in float32, float64 and float16.
forest = dict(n_targets=2, roots=[0, 4],
              modes=[0, 1, 6, 4, 2, 3, 5], feat=[0, 1, 2, 0, 1, 2, 0],
              splits=[2.5, 3.0, 0, 5.0, 1.5, 6.0, 4.0],
              tid=[1, 0, 2, 3, 5, 4, 6], tleaf=[0, 1, 1, 1, 0, 1, 1],
              fid=[2, 1, 3, 4, 6, 5, 7], fleaf=[0, 1, 0, 1, 0, 1, 1],
              ltarget=[0, 1, 0, 1, 1, 0, 1, 0], lw=[1.5, -2, 3.25, 0.5, 4, -1, 2.5, 7],
              members=[1, 4, 6.5, np.nan], nan=[1, 0, 0, 0, 0, 1, 0])
xf = np.array([[0, 0, 0], [3, 2, 1], [3, 4, 4], [6, 1, 6.5], [np.nan, 2, 7], [2.5, np.nan, 6],
               [5, 1.5, np.nan], [4, 3, 4], [1, 8, 6.5], [7, 0.5, 2]], np.float64)
for agg, an in ((0, "average"), (1, "sum"), (2, "min"), (3, "max")):
    f = dict(forest, agg=agg)
    for dtype, dn in ((np.float32, ""), (np.float64, "_double"), (np.float16, "_half")):
        xx = xf.astype(dtype)
        yy = te5_eval(xx, f, dtype)
        ml(f"ml_tree_ensemble_{an}{dn}", te5_node(f, dtype), {"X": xx}, {"Y": yy.astype(dtype)}, 5)
# Post transforms on two targets (numpy: softmax, logistic).
ysum = te5_eval(xf, forest)
e = np.exp(ysum - ysum.max(1, keepdims=True))
for post, pn, want in ((1, "softmax", e / e.sum(1, keepdims=True)),
                       (2, "logistic", 1 / (1 + np.exp(-ysum)))):
    ml(f"ml_tree_ensemble_{pn}", te5_node(dict(forest, post=post), np.float32),
       {"X": xf.astype(np.float32)}, {"Y": want.astype(np.float32)}, 5)
# A one-leaf tree: both branches of its single node go to the same leaf.
one = dict(n_targets=1, roots=[0], modes=[0], feat=[0], splits=[0], tid=[0], tleaf=[1], fid=[0],
           fleaf=[1], ltarget=[0], lw=[3.5])
ml("ml_tree_ensemble_one_leaf", te5_node(one, np.float32), {"X": xf[:3, :1].astype(np.float32)},
   {"Y": np.full((3, 1), 3.5, np.float32)}, 5)


# ---- linear models ------------------------------------------------------------
from sklearn.linear_model import LinearRegression, LogisticRegression  # noqa: E402
from sklearn.svm import SVC, SVR, LinearSVC  # noqa: E402

Xs = X / 4  # scaled: logistic scores stay moderate
Xst = Xt / 4
lr3 = LogisticRegression(multi_class="multinomial", max_iter=500).fit(Xs, y3)
lc = dict(coefficients=[float(v) for v in lr3.coef_.ravel()],
          intercepts=[float(v) for v in lr3.intercept_], classlabels_ints=[0, 1, 2])
ml("ml_linear_classifier_softmax", node("LinearClassifier", ["X"], ["Y", "Z"], multi_class=1,
                                        post_transform="SOFTMAX", **lc),
   {"X": Xst}, {"Y": lr3.predict(Xst).astype(np.int64),
                "Z": lr3.predict_proba(Xst).astype(np.float32)}, 1)
ml("ml_linear_classifier_none_double", node("LinearClassifier", ["X"], ["Y", "Z"], **lc),
   {"X": Xst.astype(np.float64)}, {"Y": lr3.predict(Xst).astype(np.int64),
                                   "Z": lr3.decision_function(Xst).astype(np.float32)}, 1)
lr2 = LogisticRegression(max_iter=500).fit(Xs, y2)
w, b = lr2.coef_.ravel(), float(lr2.intercept_[0])
ml("ml_linear_classifier_binary_logistic",
   node("LinearClassifier", ["X"], ["Y", "Z"], post_transform="LOGISTIC",
        coefficients=[float(v) for v in np.r_[-w, w]], intercepts=[-b, b], classlabels_ints=[0, 1]),
   {"X": Xst}, {"Y": lr2.predict(Xst).astype(np.int64),
                "Z": lr2.predict_proba(Xst).astype(np.float32)}, 1)
# One score for two labels: the label is the second above 0; the scores
# become [1 - s, s] (ONNX Runtime's layout).
df = lr2.decision_function(Xst)
ml("ml_linear_classifier_binary_one_score",
   node("LinearClassifier", ["X"], ["Y", "Z"], coefficients=[float(v) for v in w], intercepts=[b],
        classlabels_ints=[3, 9]),
   {"X": Xst}, {"Y": np.where(df > 0, 9, 3).astype(np.int64),
                "Z": np.stack([1 - df, df], 1).astype(np.float32)}, 1)
lin = LinearRegression().fit(X, y_reg)
ml("ml_linear_regressor", node("LinearRegressor", ["X"], ["Y"],
                               coefficients=[float(v) for v in lin.coef_],
                               intercepts=[float(lin.intercept_)]),
   {"X": Xt}, {"Y": lin.predict(Xt).astype(np.float32).reshape(-1, 1)}, 1)
y_two = np.stack([y_reg, X[:, 2] * 2 - X[:, 0]], 1)
lin2 = LinearRegression().fit(X, y_two)
ml("ml_linear_regressor_two_targets_int", node("LinearRegressor", ["X"], ["Y"], targets=2,
                                               coefficients=[float(v) for v in lin2.coef_.ravel()],
                                               intercepts=[float(v) for v in lin2.intercept_]),
   {"X": np.floor(Xt).astype(np.int32)},
   {"Y": lin2.predict(np.floor(Xt)).astype(np.float32)}, 1)
ml("ml_linear_regressor_no_intercept_1d", node("LinearRegressor", ["X"], ["Y"],
                                               coefficients=[0.5, -1.0, 2.0]),
   {"X": np.array([1, 2, 3], np.float32)}, {"Y": np.array([[4.5]], np.float32)}, 1)


# ---- support vector machines ---------------------------------------------------

def svm_attrs(m, gamma, coef0=0.0, degree=3, kernel="RBF"):
    return dict(kernel_type=kernel, kernel_params=[float(gamma), float(coef0), float(degree)],
                support_vectors=[float(v) for v in m.support_vectors_.ravel()],
                coefficients=[float(v) for v in m._dual_coef_.ravel()],
                rho=[float(v) for v in m._intercept_])


for kernel, kw in (("linear", {}), ("poly", dict(gamma=0.2, coef0=1.0, degree=2)),
                   ("rbf", dict(gamma=0.3)), ("sigmoid", dict(gamma=0.05, coef0=-0.5))):
    svc = SVC(kernel=kernel, decision_function_shape="ovo", C=2.0, **kw).fit(Xs, y3)
    a = svm_attrs(svc, kw.get("gamma", 0), kw.get("coef0", 0), kw.get("degree", 3), kernel.upper())
    ml(f"ml_svm_classifier_{kernel}", node("SVMClassifier", ["X"], ["Y", "Z"],
                                           vectors_per_class=[int(v) for v in svc.n_support_],
                                           classlabels_ints=[0, 1, 2], **a),
       {"X": Xst}, {"Y": svc.predict(Xst).astype(np.int64),
                    "Z": svc.decision_function(Xst).astype(np.float32)}, 1)
    svr = SVR(kernel=kernel, C=2.0, **kw).fit(Xs, y_reg)
    a = svm_attrs(svr, kw.get("gamma", 0), kw.get("coef0", 0), kw.get("degree", 3),
                  kernel.upper())
    ml(f"ml_svm_regressor_{kernel}", node("SVMRegressor", ["X"], ["Y"],
                                          n_supports=len(svr.support_), **a),
       {"X": Xst}, {"Y": svr.predict(Xst).astype(np.float32).reshape(-1, 1)}, 1)
svp = SVC(kernel="rbf", gamma=0.3, probability=True, random_state=0).fit(Xs, y3)
ml("ml_svm_classifier_proba", node("SVMClassifier", ["X"], ["Y", "Z"],
                                   vectors_per_class=[int(v) for v in svp.n_support_],
                                   classlabels_ints=[0, 1, 2], prob_a=[float(v) for v in svp.probA_],
                                   prob_b=[float(v) for v in svp.probB_], **svm_attrs(svp, 0.3)),
   {"X": Xst}, {"Y": svp.predict(Xst).astype(np.int64),
                "Z": svp.predict_proba(Xst).astype(np.float32)}, 1)
# Two classes: libsvm's one decision value s (above 0: the first class);
# ONNX Runtime writes [-s, s], i.e. scikit-learn's [d, -d].
svb = SVC(kernel="rbf", gamma=0.3).fit(Xs, y2)
d = svb.decision_function(Xst)
ml("ml_svm_classifier_binary", node("SVMClassifier", ["X"], ["Y", "Z"],
                                    vectors_per_class=[int(v) for v in svb.n_support_],
                                    classlabels_ints=[0, 1], **svm_attrs(svb, 0.3)),
   {"X": Xst}, {"Y": svb.predict(Xst).astype(np.int64),
                "Z": np.stack([d, -d], 1).astype(np.float32)}, 1)
# liblinear's layout: no support vectors, one coefficient row per class.
lsvc = LinearSVC(fit_intercept=False, max_iter=5000).fit(Xs, y3)
ml("ml_svm_classifier_liblinear", node("SVMClassifier", ["X"], ["Y", "Z"],
                                       coefficients=[float(v) for v in lsvc.coef_.ravel()],
                                       rho=[0.0], classlabels_ints=[0, 1, 2]),
   {"X": Xst}, {"Y": lsvc.predict(Xst).astype(np.int64),
                "Z": lsvc.decision_function(Xst).astype(np.float32)}, 1)
lsvr = SVR(kernel="linear").fit(Xs, y_reg)
ml("ml_svm_regressor_liblinear", node("SVMRegressor", ["X"], ["Y"],
                                      coefficients=[float(v) for v in lsvr.coef_.ravel()],
                                      rho=[float(lsvr.intercept_[0])]),
   {"X": Xst}, {"Y": lsvr.predict(Xst).astype(np.float32).reshape(-1, 1)}, 1)


# ---- feature transforms ------------------------------------------------------
from sklearn.impute import SimpleImputer  # noqa: E402
from sklearn.preprocessing import Binarizer, Normalizer, OneHotEncoder, StandardScaler  # noqa: E402

ss = StandardScaler().fit(X)
ml("ml_scaler_standard", node("Scaler", ["X"], ["Y"], offset=[float(v) for v in ss.mean_],
                              scale=[float(v) for v in 1 / ss.scale_]),
   {"X": Xt}, {"Y": ss.transform(Xt).astype(np.float32)}, 1)
ml("ml_scaler_one_value_int", node("Scaler", ["X"], ["Y"], offset=[2.0], scale=[0.5]),
   {"X": np.arange(12, dtype=np.int64).reshape(3, 4)},
   {"Y": ((np.arange(12).reshape(3, 4) - 2) * 0.5).astype(np.float32)}, 1)
for norm in ("l1", "l2", "max"):
    nm = Normalizer(norm=norm).fit(X)  # X >= 0: scikit-learn's max of |x| is the max
    ml(f"ml_normalizer_{norm}", node("Normalizer", ["X"], ["Y"], norm=norm.upper()),
       {"X": Xt}, {"Y": nm.transform(Xt).astype(np.float32)}, 1)
xn = np.array([[-3, 1, 2], [0, 0, 0], [-1, -4, -2]], np.float64)
ml("ml_normalizer_negative_max", node("Normalizer", ["X"], ["Y"], norm="MAX"), {"X": xn},
   {"Y": np.array([[-1.5, 0.5, 1], [0, 0, 0], [1, 4, 2]], np.float32)}, 1)
ml("ml_normalizer_l2_1d_int", node("Normalizer", ["X"], ["Y"], norm="L2"),
   {"X": np.array([3, -4], np.int32)}, {"Y": np.array([0.6, -0.8], np.float32)}, 1)
# OvR logistic regression: LOGISTIC scores, then Normalizer L1.
lro = LogisticRegression(multi_class="ovr", max_iter=500).fit(Xs, y3)
ml("ml_linear_classifier_ovr_normalizer",
   [node("LinearClassifier", ["X"], ["Y", "S"], post_transform="LOGISTIC",
         coefficients=[float(v) for v in lro.coef_.ravel()],
         intercepts=[float(v) for v in lro.intercept_], classlabels_ints=[0, 1, 2]),
    node("Normalizer", ["S"], ["Z"], norm="L1")],
   {"X": Xst}, {"Y": lro.predict(Xst).astype(np.int64),
                "Z": lro.predict_proba(Xst).astype(np.float32)}, 1)
bz = Binarizer(threshold=3.3).fit(X)
ml("ml_binarizer_sklearn", node("Binarizer", ["X"], ["Y"], threshold=3.3),
   {"X": Xt}, {"Y": bz.transform(Xt).astype(np.float32)}, 1)
xb = np.random.default_rng(1).standard_normal((3, 4, 5)).astype(np.float32)  # the spec's example
ml("ml_binarizer", node("Binarizer", ["X"], ["Y"], threshold=1.0), {"X": xb},
   {"Y": np.where(xb > 1.0, 1, 0).astype(np.float32)}, 1)
ml("ml_binarizer_int64", node("Binarizer", ["X"], ["Y"]),
   {"X": np.array([-2, 0, 3], np.int64)}, {"Y": np.array([0, 0, 1], np.int64)}, 1)
Xm = X.copy()
Xm[::5, 1] = np.nan
Xm[::7, 2] = np.nan
si = SimpleImputer(strategy="mean").fit(Xm)
Xmt = Xt.copy()
Xmt[::3, 0] = np.nan
Xmt[1::4, 2] = np.nan
ml("ml_imputer_mean_nan", node("Imputer", ["X"], ["Y"],
                               imputed_value_floats=[float(v) for v in si.statistics_],
                               replaced_value_float=float("nan")),
   {"X": Xmt}, {"Y": si.transform(Xmt).astype(np.float32)}, 1)
xi = np.array([[1, -1, 3], [-1, 5, -1]], np.int64)
ml("ml_imputer_int64", node("Imputer", ["X"], ["Y"], imputed_value_int64s=[7],
                            replaced_value_int64=-1),
   {"X": xi}, {"Y": np.where(xi == -1, 7, xi).astype(np.int64)}, 1)
xd = np.array([[0.0, 2.5], [1.5, 0.0]], np.float64)
ml("ml_imputer_double_per_feature", node("Imputer", ["X"], ["Y"],
                                         imputed_value_floats=[9.0, -9.0]),
   {"X": xd}, {"Y": np.array([[9.0, 2.5], [1.5, -9.0]])}, 1)

# OneHotEncoder: one column of integer categories; an unknown value gives zeros.
cats = np.array([[1], [4], [2], [4], [7], [1]], np.int64)
oh = OneHotEncoder(handle_unknown="ignore").fit(cats)
q = np.array([[4], [1], [3], [7], [2]], np.int64)
ml("ml_one_hot_encoder_sklearn", node("OneHotEncoder", ["X"], ["Y"],
                                      cats_int64s=[int(v) for v in oh.categories_[0]]),
   {"X": q}, {"Y": oh.transform(q).toarray().astype(np.float32).reshape(5, 1, -1)}, 1)
ml("ml_one_hot_encoder_float", node("OneHotEncoder", ["X"], ["Y"], cats_int64s=[0, 2, 5]),
   {"X": np.array([2.0, 5.9, 0.0, 3.0], np.float32)},
   {"Y": np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0], [0, 0, 0]], np.float32)}, 1)

# ArrayFeatureExtractor: the spec's example, then int64 data and a 1-D X.
xa = np.arange(12).reshape((3, 4)).astype(np.float32)
ml("ml_array_feature_extractor", node("ArrayFeatureExtractor", ["x", "y"], ["z"]),
   {"x": xa, "y": np.array([0, 1], np.int64)},
   {"z": np.array([[0, 4, 8], [1, 5, 9]], np.float32).T}, 1)
ml("ml_array_feature_extractor_int64_3d", node("ArrayFeatureExtractor", ["x", "y"], ["z"]),
   {"x": np.arange(24, dtype=np.int64).reshape(2, 3, 4), "y": np.array([3, 0, 3], np.int64)},
   {"z": np.arange(24, dtype=np.int64).reshape(2, 3, 4)[..., [3, 0, 3]]}, 1)
ml("ml_array_feature_extractor_1d", node("ArrayFeatureExtractor", ["x", "y"], ["z"]),
   {"x": np.array([5, 6, 7], np.int32), "y": np.array([2], np.int64)},
   {"z": np.array([[7]], np.int32)}, 1)

# FeatureVectorizer: inputs side by side, each cut or padded to its size.
fa = np.array([[1, 2], [3, 4]], np.int64)
fb = np.array([[0.5, 1.5, 2.5], [3.5, 4.5, 5.5]], np.float64)
ml("ml_feature_vectorizer", node("FeatureVectorizer", ["a", "b"], ["y"], inputdimensions=[2, 3]),
   {"a": fa, "b": fb}, {"y": np.concatenate([fa, fb], 1).astype(np.float32)}, 1)
ml("ml_feature_vectorizer_pad_cut", node("FeatureVectorizer", ["a", "b"], ["y"],
                                         inputdimensions=[3, 2]),
   {"a": fa, "b": fb},
   {"y": np.array([[1, 2, 0, 0.5, 1.5], [3, 4, 0, 3.5, 4.5]], np.float32)}, 1)


# ---- LabelEncoder on numbers (2: lists; 4: tensors, more types) ----------------
xk = np.array([[1, 5, 3], [9, 1, 2]], np.int64)
ml("ml_label_encoder_int_int", node("LabelEncoder", ["X"], ["Y"], keys_int64s=[1, 2, 3],
                                    values_int64s=[10, 20, 30], default_int64=-7),
   {"X": xk}, {"Y": np.array([[10, -7, 30], [-7, 10, 20]], np.int64)}, 2)
ml("ml_label_encoder_int_float", node("LabelEncoder", ["X"], ["Y"], keys_int64s=[1, 2],
                                      values_floats=[0.5, 1.5]),
   {"X": xk}, {"Y": np.array([[0.5, -0.0, -0.0], [-0.0, 0.5, 1.5]], np.float32)}, 2)
xf2 = np.array([0.5, np.nan, 2.0, -1.0], np.float32)
ml("ml_label_encoder_float_int_nan", node("LabelEncoder", ["X"], ["Y"],
                                          keys_floats=[0.5, float("nan"), 2.0],
                                          values_int64s=[1, 2, 3]),
   {"X": xf2}, {"Y": np.array([1, 2, 3, -1], np.int64)}, 4)
ml("ml_label_encoder_repeated_key", node("LabelEncoder", ["X"], ["Y"], keys_int64s=[4, 4, 6],
                                         values_int64s=[1, 2, 3]),
   {"X": np.array([4, 6, 5], np.int64)}, {"Y": np.array([2, 3, -1], np.int64)}, 4)
ml("ml_label_encoder_tensor_int16",
   node("LabelEncoder", ["X"], ["Y"],
        keys_tensor=helper.make_tensor("keys_tensor", TensorProto.INT32, (3,), [7, 8, 9]),
        values_tensor=helper.make_tensor("values_tensor", TensorProto.INT16, (3,), [0, 1, 2]),
        default_tensor=helper.make_tensor("default_tensor", TensorProto.INT16, (1,), [42])),
   {"X": np.array([9, 7, 1, 8], np.int32)}, {"Y": np.array([2, 0, 42, 1], np.int16)}, 4)
ml("ml_label_encoder_tensor_double",
   node("LabelEncoder", ["X"], ["Y"],
        keys_tensor=numpy_helper.from_array(np.array([0.25, -3.0]), "keys_tensor"),
        values_tensor=numpy_helper.from_array(np.array([1.5, 2.5]), "values_tensor")),
   {"X": np.array([-3.0, 0.25, 1.0])}, {"Y": np.array([2.5, 1.5, -0.0])}, 4)


# ---- post transforms computed with numpy (scipy's erfinv for PROBIT) ----------
from scipy.special import erfinv  # noqa: E402

xp = np.array([[0.1, 0.2], [0.3, 0.05], [0.0, 0.0]], np.float32)
cp = np.array([[1.0, 0.5], [0.2, 1.5]])
sp = xp.astype(np.float64) @ cp.T + np.array([0.3, 0.1])
ml("ml_linear_regressor_probit", node("LinearRegressor", ["X"], ["Y"], targets=2,
                                      post_transform="PROBIT",
                                      coefficients=[float(v) for v in cp.ravel()],
                                      intercepts=[0.3, 0.1]),
   {"X": xp}, {"Y": (np.sqrt(2) * erfinv(2 * sp - 1)).astype(np.float32)}, 1)
# SOFTMAX_ZERO: a zero score keeps a zero share.
cz = np.array([[1.0, 0.0], [0.0, 0.0], [-1.0, 2.0]])
sz = xp.astype(np.float64) @ cz.T
ez = np.where(sz != 0, np.exp(sz - sz.max(1, keepdims=True)), 0)
ml("ml_linear_classifier_softmax_zero",
   node("LinearClassifier", ["X"], ["Y", "Z"], post_transform="SOFTMAX_ZERO",
        coefficients=[float(v) for v in cz.ravel()], intercepts=[0.0, 0.0, 0.0],
        classlabels_ints=[5, 6, 7]),
   {"X": xp}, {"Y": np.array([5, 6, 7], np.int64)[sz.argmax(1)],
               "Z": (ez / np.where(ez.sum(1, keepdims=True) > 0, ez.sum(1, keepdims=True), 1))
               .astype(np.float32)}, 1)
# Legacy MIN and MAX over the random forest's trees.
for agg in ("MIN", "MAX"):
    per_tree = np.stack([t.predict(Xt) for t in est], 1)
    ml(f"ml_tree_regressor_{agg.lower()}", node("TreeEnsembleRegressor", ["X"], ["Y"],
                                                **regressor(est, 1.0, agg=agg, base=0.25)),
       {"X": Xt}, {"Y": ((per_tree.min(1) if agg == "MIN" else per_tree.max(1)) + 0.25)
                   .astype(np.float32).reshape(-1, 1)}, 3)
# TreeEnsemble with PROBIT on weights in (0, 1), and SOFTMAX_ZERO.
fp = dict(forest, lw=[0.1, 0.2, 0.3, 0.05, 0.15, 0.25, 0.35, 0.12])
yp = te5_eval(xf, fp)
ml("ml_tree_ensemble_probit", te5_node(dict(fp, post=4), np.float32),
   {"X": xf.astype(np.float32)}, {"Y": (np.sqrt(2) * erfinv(2 * yp - 1)).astype(np.float32)}, 5)
ez = np.where(ysum != 0, np.exp(ysum - ysum.max(1, keepdims=True)), 0)
ml("ml_tree_ensemble_softmax_zero", te5_node(dict(forest, post=3), np.float32),
   {"X": xf.astype(np.float32)}, {"Y": (ez / ez.sum(1, keepdims=True)).astype(np.float32)}, 5)


# ---- the spec's LabelEncoder examples: strings ---------------------------------
xs_ = np.array(["a", "b", "d", "c", "g"]).astype(object)
ml("ml_label_encoder_string_int", node("LabelEncoder", ["X"], ["Y"], keys_strings=["a", "b", "c"],
                                       values_int64s=[0, 1, 2], default_int64=42),
   {"X": xs_}, {"Y": np.array([0, 1, 42, 2, 42]).astype(np.int64)}, 4)
ml("ml_label_encoder_string_int_no_default",
   node("LabelEncoder", ["X"], ["Y"], keys_strings=["a", "b", "c"], values_int64s=[0, 1, 2]),
   {"X": xs_}, {"Y": np.array([0, 1, -1, 2, -1]).astype(np.int64)}, 4)
i16 = dict(values_tensor=helper.make_tensor("values_tensor", TensorProto.INT16, (3,), [0, 1, 2]),
           default_tensor=helper.make_tensor("default_tensor", TensorProto.INT16, (1,), [42]))
ml("ml_label_encoder_tensor_mapping",
   node("LabelEncoder", ["X"], ["Y"], **i16,
        keys_tensor=helper.make_tensor("keys_tensor", TensorProto.STRING, (3,), [b"a", b"b", b"c"])),
   {"X": xs_}, {"Y": np.array([0, 1, 42, 2, 42]).astype(np.int16)}, 4)
ml("ml_label_encoder_tensor_value_only_mapping",
   node("LabelEncoder", ["X"], ["Y"], keys_strings=["a", "b", "c"], **i16),
   {"X": xs_}, {"Y": np.array([0, 1, 42, 2, 42]).astype(np.int16)}, 4)


# ---- a pipeline: SimpleImputer -> StandardScaler -> SVC (rbf), as one graph -----
from sklearn.pipeline import make_pipeline  # noqa: E402

pipe = make_pipeline(SimpleImputer(strategy="median"), StandardScaler(),
                     SVC(kernel="rbf", gamma=0.4, decision_function_shape="ovo")).fit(Xm, y3)
imp, sc_, sv_ = pipe.steps[0][1], pipe.steps[1][1], pipe.steps[2][1]
ml("ml_pipeline_imputer_scaler_svc",
   [node("Imputer", ["X"], ["I"], imputed_value_floats=[float(v) for v in imp.statistics_],
         replaced_value_float=float("nan")),
    node("Scaler", ["I"], ["S"], offset=[float(v) for v in sc_.mean_],
         scale=[float(v) for v in 1 / sc_.scale_]),
    node("SVMClassifier", ["S"], ["Y", "Z"], vectors_per_class=[int(v) for v in sv_.n_support_],
         classlabels_ints=[0, 1, 2], **svm_attrs(sv_, 0.4))],
   {"X": Xmt}, {"Y": pipe.predict(Xmt).astype(np.int64),
                "Z": pipe.decision_function(Xmt).astype(np.float32)}, 1)


# ---- string paths: classifiers with string class labels (scikit-learn's own
# labels and predictions), LabelEncoder, CategoryMapper, OneHotEncoder and
# ArrayFeatureExtractor on strings -------------------------------------------------
def S(v):
    return np.array(v, dtype=object)


names = np.array(["cat", "dog", "fish"])
ys = names[y3]
ys2 = np.array(["no", "yes"])[y2]


def str_labels(a, m):
    """a's int labels replaced by the fitted model's string classes."""
    a = {k: v for k, v in a.items() if k not in ("classlabels_int64s", "classlabels_ints")}
    a["classlabels_strings"] = [str(v) for v in m.classes_]
    return a


dcs = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, ys)
ml("ml_tree_classifier_dt_strings", node("TreeEnsembleClassifier", ["X"], ["Y", "Z"],
                                         **str_labels(classifier([dcs], 3, 1.0), dcs)),
   {"X": Xt}, {"Y": S(dcs.predict(Xt)), "Z": dcs.predict_proba(Xt).astype(np.float32)}, 1)
rfs = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0).fit(X, ys)
ml("ml_tree_classifier_rf_strings", node("TreeEnsembleClassifier", ["X"], ["Y", "Z"],
                                         **str_labels(classifier(rfs.estimators_, 3, 1 / 5), rfs)),
   {"X": Xt}, {"Y": S(rfs.predict(Xt)), "Z": rfs.predict_proba(Xt).astype(np.float32)}, 3)
rfbs = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=1).fit(X, ys2)
ml("ml_tree_classifier_rf_binary_strings",
   node("TreeEnsembleClassifier", ["X"], ["Y", "Z"],
        **str_labels(classifier(rfbs.estimators_, 2, 1 / 5, binary=True), rfbs)),
   {"X": Xt}, {"Y": S(rfbs.predict(Xt)), "Z": rfbs.predict_proba(Xt).astype(np.float32)}, 3)
lrs = LogisticRegression(multi_class="multinomial", max_iter=500).fit(Xs, ys)
ml("ml_linear_classifier_softmax_strings",
   node("LinearClassifier", ["X"], ["Y", "Z"], multi_class=1, post_transform="SOFTMAX",
        coefficients=[float(v) for v in lrs.coef_.ravel()],
        intercepts=[float(v) for v in lrs.intercept_], classlabels_strings=list(lrs.classes_)),
   {"X": Xst}, {"Y": S(lrs.predict(Xst)), "Z": lrs.predict_proba(Xst).astype(np.float32)}, 1)
lrs2 = LogisticRegression(max_iter=500).fit(Xs, ys2)  # one score for two labels
dfs = lrs2.decision_function(Xst)
ml("ml_linear_classifier_binary_one_score_strings",
   node("LinearClassifier", ["X"], ["Y", "Z"], coefficients=[float(v) for v in lrs2.coef_.ravel()],
        intercepts=[float(lrs2.intercept_[0])], classlabels_strings=list(lrs2.classes_)),
   {"X": Xst}, {"Y": S(lrs2.predict(Xst)), "Z": np.stack([1 - dfs, dfs], 1).astype(np.float32)}, 1)
svs = SVC(kernel="rbf", gamma=0.3, decision_function_shape="ovo", C=2.0).fit(Xs, ys)
ml("ml_svm_classifier_rbf_strings",
   node("SVMClassifier", ["X"], ["Y", "Z"], vectors_per_class=[int(v) for v in svs.n_support_],
        classlabels_strings=list(svs.classes_), **svm_attrs(svs, 0.3)),
   {"X": Xst}, {"Y": S(svs.predict(Xst)), "Z": svs.decision_function(Xst).astype(np.float32)}, 1)
svbs = SVC(kernel="rbf", gamma=0.3).fit(Xs, ys2)
ds = svbs.decision_function(Xst)
ml("ml_svm_classifier_binary_strings",
   node("SVMClassifier", ["X"], ["Y", "Z"], vectors_per_class=[int(v) for v in svbs.n_support_],
        classlabels_strings=list(svbs.classes_), **svm_attrs(svbs, 0.3)),
   {"X": Xst}, {"Y": S(svbs.predict(Xst)), "Z": np.stack([ds, -ds], 1).astype(np.float32)}, 1)

# LabelEncoder 1: strings to their index in classes_strings and back (by X's
# type); what is missing gives default_int64 / default_string (-1, "_Unused").
cls_ = ["red", "green", "", "blue"]
ml("ml_label_encoder_v1_string_int",
   node("LabelEncoder", ["X"], ["Y"], classes_strings=cls_, default_int64=-5),
   {"X": S([["green", "red"], ["pink", ""], ["blue", "Red"]])},
   {"Y": np.array([[1, 0], [-5, 2], [3, -5]], np.int64)}, 1)
ml("ml_label_encoder_v1_int_string", node("LabelEncoder", ["X"], ["Y"], classes_strings=cls_),
   {"X": np.array([3, 0, 4, -1, 2], np.int64)},
   {"Y": S(["blue", "red", "_Unused", "_Unused", ""])}, 1)
# 2 and 4: string keys and/or values; a repeated key's last value wins (4).
ml("ml_label_encoder_int_string",
   node("LabelEncoder", ["X"], ["Y"], keys_int64s=[7, 3], values_strings=["seven", "three"],
        default_string="none"),
   {"X": np.array([[3, 7], [1, 3]], np.int64)},
   {"Y": S([["three", "seven"], ["none", "three"]])}, 2)
ml("ml_label_encoder_string_string_default",
   node("LabelEncoder", ["X"], ["Y"], keys_strings=["a", "b"], values_strings=["x", "y"]),
   {"X": S(["b", "c", "a"])}, {"Y": S(["y", "_Unused", "x"])}, 2)
ml("ml_label_encoder_float_string",
   node("LabelEncoder", ["X"], ["Y"], keys_floats=[0.5, 1.5], values_strings=["half", "more"],
        default_string=""),
   {"X": np.array([1.5, 2.0, 0.5], np.float32)}, {"Y": S(["more", "", "half"])}, 2)
ml("ml_label_encoder_string_repeated_key",
   node("LabelEncoder", ["X"], ["Y"], keys_strings=["k", "j", "k"], values_floats=[1.0, 2.0, 3.0]),
   {"X": S(["k", "j", "z"])}, {"Y": np.array([3.0, 2.0, -0.0], np.float32)}, 4)
ml("ml_label_encoder_tensor_strings",
   node("LabelEncoder", ["X"], ["Y"],
        keys_tensor=helper.make_tensor("keys_tensor", TensorProto.INT32, (3,), [1, 2, 3]),
        values_tensor=helper.make_tensor("values_tensor", TensorProto.STRING, (3,),
                                         [b"one", b"two", "dr\u00e9i".encode()]),
        default_tensor=helper.make_tensor("default_tensor", TensorProto.STRING, (1,), [b"?"])),
   {"X": np.array([3, 9, 1, 2], np.int32)}, {"Y": S(["dr\u00e9i", "?", "one", "two"])}, 4)

# CategoryMapper: strings to int64 (X strings) or int64 to strings (X int64).
cm = dict(cats_strings=["cat", "dog", "fish"], cats_int64s=[10, 20, 30])
ml("ml_category_mapper_string_int",
   node("CategoryMapper", ["X"], ["Y"], default_int64=99, **cm),
   {"X": S([["dog", "cat"], ["cow", "fish"]])}, {"Y": np.array([[20, 10], [99, 30]], np.int64)}, 1)
ml("ml_category_mapper_string_int_no_default", node("CategoryMapper", ["X"], ["Y"], **cm),
   {"X": S(["fish", "bird"])}, {"Y": np.array([30, -1], np.int64)}, 1)
ml("ml_category_mapper_int_string",
   node("CategoryMapper", ["X"], ["Y"], default_string="unknown", **cm),
   {"X": np.array([30, 11, 10, 20], np.int64)}, {"Y": S(["fish", "unknown", "cat", "dog"])}, 1)
ml("ml_category_mapper_int_string_no_default", node("CategoryMapper", ["X"], ["Y"], **cm),
   {"X": np.array([[0], [20]], np.int64)}, {"Y": S([["_Unused"], ["dog"]])}, 1)

# OneHotEncoder on strings, categories from scikit-learn's encoder.
sc_cats = S([["red"], ["green"], ["blue"], ["green"]])
ohs = OneHotEncoder(handle_unknown="ignore").fit(sc_cats)
qs = S([["green"], ["pink"], ["red"], ["blue"]])
ml("ml_one_hot_encoder_strings", node("OneHotEncoder", ["X"], ["Y"],
                                      cats_strings=[str(v) for v in ohs.categories_[0]]),
   {"X": qs}, {"Y": ohs.transform(qs).toarray().astype(np.float32).reshape(4, 1, -1)}, 1)
qs0 = S([["red", "blue"], ["green", "red"]])
ml("ml_one_hot_encoder_strings_zeros_0",
   node("OneHotEncoder", ["X"], ["Y"], cats_strings=["blue", "green", "red"], zeros=0),
   {"X": qs0}, {"Y": np.eye(3, dtype=np.float32)[[[2, 0], [1, 2]]]}, 1)

# ArrayFeatureExtractor takes strings too.
xas = S([["a", "b", "c"], ["d", "", "f"]])
ml("ml_array_feature_extractor_strings", node("ArrayFeatureExtractor", ["x", "y"], ["z"]),
   {"x": xas, "y": np.array([2, 1, 2], np.int64)}, {"z": xas[:, [2, 1, 2]]}, 1)
