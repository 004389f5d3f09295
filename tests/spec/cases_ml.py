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
