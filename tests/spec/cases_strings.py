"""String ops: every example of StringConcat, StringSplit and RegexFullMatch
(opset 20), StringNormalizer edges the onnx 1.12 tests miss, and Cast to and
from string at opset 21. Expected values come from Python's own string
methods (str.split, re.fullmatch, str.lower/upper, float formatting)."""
import re

import numpy as np
from onnx import helper

from spec_case import case


def S(v):
    return np.array(v, dtype=object)


# ---- StringConcat ----------------------------------------------------------
def concat(name, x, y):
    x, y = S(x), S(y)
    z = np.asarray(np.frompyfunc(lambda a, b: a + b, 2, 1)(x, y), dtype=object)
    case(name, helper.make_node("StringConcat", ["x", "y"], ["z"]), {"x": x, "y": y},
         {"z": S(z)}, opset=20)


concat("string_concat", ["abc", "def"], [".com", ".net"])
concat("string_concat_broadcasting", ["cat", "dog", "snake"], ["s"])
concat("string_concat_zero_dimensional", "cat", "s")
concat("string_concat_empty_string", ["abc", ""], ["", "abc"])
concat("string_concat_utf8", ["的", "中"], ["的", "中"])
concat("string_concat_2d_broadcast", [["a"], ["b"]], ["x", "y", "é"])


# ---- StringSplit -----------------------------------------------------------
def split(name, x, delimiter=None, maxsplit=None):
    x = S(x)
    attrs = {}
    if delimiter is not None:
        attrs["delimiter"] = delimiter
    if maxsplit is not None:
        attrs["maxsplit"] = maxsplit
    d = delimiter if delimiter else None
    m = -1 if maxsplit is None else maxsplit
    parts = [s.split(d, m) for s in x.ravel()]
    width = max([len(p) for p in parts], default=0)
    y = np.array([p + [""] * (width - len(p)) for p in parts], dtype=object)
    y = y.reshape(x.shape + (width,))
    z = np.array([len(p) for p in parts], dtype=np.int64).reshape(x.shape)
    node = helper.make_node("StringSplit", ["x"], ["y", "z"], **attrs)
    case(name, node, {"x": x}, {"y": y, "z": z}, opset=20)


split("string_split_basic", ["abc.com", "def.net"], ".")
split("string_split_consecutive_delimiters", ["o-n-n--x-", "o-n----nx"], "-")
split("string_split_empty_string_delimiter",
      ["hello world !", "  hello   world !", " hello world   ! "], "")
split("string_split_no_delimiter", ["hello world !", "  hello   world !", " hello world   ! "])
split("string_split_empty_tensor", np.array([], dtype=object))
split("string_split_maxsplit", [["hello world", "def.net"], ["o n n x", "the quick brown fox"]],
      maxsplit=2)
split("string_split_maxsplit_delimiter", ["a,b,c,d", "", ",", "x"], ",", maxsplit=1)
split("string_split_maxsplit_0", ["  a b  ", "c"], maxsplit=0)
split("string_split_long_delimiter", ["a<=>b<=><=>c", "日本<=>語"], "<=>")
split("string_split_empty_strings", ["", "   "])


# ---- RegexFullMatch --------------------------------------------------------
def regex(name, x, pattern):
    x = S(x)
    y = np.array([re.fullmatch(pattern, s) is not None for s in x.ravel()],
                 dtype=bool).reshape(x.shape)
    case(name, helper.make_node("RegexFullMatch", ["X"], ["Y"], pattern=pattern), {"X": x},
         {"Y": y}, opset=20)


regex("regex_full_match_basic", ["www.google.com", "www.facebook.com", "www.bbc.co.uk"],
      r"www\.[\w.-]+\.\bcom\b")
regex("regex_full_match_email_domain",
      [["account@gmail.com", "account@hotmail.com"], ["not email", "account2@yahoo.com"]],
      r"(\W|^)[\w.\-]{0,25}@(yahoo|gmail)\.com(\W|$)")
regex("regex_full_match_empty", np.array([[], []], dtype=object),
      r"(\W|^)[\w.\-]{0,25}@(yahoo|gmail)\.com(\W|$)")
# full match, not search; the empty string; unicode (one code point per '.')
regex("regex_full_match_partial", ["abc", "xabc", "abcx", ""], r"abc|")
regex("regex_full_match_unicode", ["日本", "日本語", "ab"], r"..")

# ---- StringNormalizer (version 10) ------------------------------------------


def normalize(name, x, action=None, sensitive=None, stopwords=None):
    x = S(x)
    attrs = {}
    if action:
        attrs["case_change_action"] = action
    if sensitive is not None:
        attrs["is_case_sensitive"] = sensitive
    if stopwords:
        attrs["stopwords"] = stopwords
    flat = list(x.ravel())
    if stopwords:
        if sensitive:
            flat = [s for s in flat if s not in stopwords]
        else:
            low = [w.lower() for w in stopwords]
            flat = [s for s in flat if s.lower() not in low]
    if action == "LOWER":
        flat = [s.lower() for s in flat]
    elif action == "UPPER":
        flat = [s.upper() for s in flat]
    if not flat:
        flat = [""]
    y = S(flat).reshape((len(flat),) if x.ndim == 1 else (1, len(flat)))
    case(name, helper.make_node("StringNormalizer", ["x"], ["y"], **attrs), {"x": x}, {"y": y},
         opset=10)


normalize("strnormalizer_insensitive_unicode", ["Éte", "éTÉ", "Straße", "ÄPFEL", "Ωmega"],
          "LOWER", 0, ["ÉTÉ"])
normalize("strnormalizer_upper_unicode", [["école", "ωmega", "Ünter", ""]], "UPPER")
normalize("strnormalizer_sensitive_keeps_case", ["Monday", "monday", "MONDAY"], "NONE", 1,
          ["monday"])
normalize("strnormalizer_insensitive_all_dropped", [["Monday", "MONDAY"]], "LOWER", 0,
          ["monday"])

# ---- Cast to and from string, opset 21 -------------------------------------


def shortest(v, t):
    """The fewest %g digits that read back as the same value of type t."""
    if np.isnan(v):
        return "NaN"
    if np.isinf(v):
        return "INF" if v > 0 else "-INF"
    for p in range(1, 18):
        s = "%.*g" % (p, float(v))
        if t(float(s)) == t(v):
            return s
    return s


xf = np.array([0.1, -2.5, 1e-5, 123456789.0, np.nan, np.inf, -np.inf, 0.0, 3.0], np.float32)
case("cast_float_to_string_21", helper.make_node("Cast", ["x"], ["y"], to=8), {"x": xf},
     {"y": S([shortest(v, np.float32) for v in xf])}, opset=21)
xd = np.array([0.1, 1 / 3, -1e300, 2.0], np.float64)
case("cast_double_to_string_21", helper.make_node("Cast", ["x"], ["y"], to=8), {"x": xd},
     {"y": S([shortest(v, np.float64) for v in xd])}, opset=21)
xi = np.array([0, -7, 9223372036854775807, -9223372036854775808], np.int64)
case("cast_int64_to_string_21", helper.make_node("Cast", ["x"], ["y"], to=8), {"x": xi},
     {"y": S([str(v) for v in xi])}, opset=21)
xs = S(["3.5", "1e-5", "1E8", "-inf", "+Inf", "nan", " 42 ", "-0.25"])
case("cast_string_to_float_21", helper.make_node("Cast", ["x"], ["y"], to=1), {"x": xs},
     {"y": np.array([float(s) for s in xs], np.float32)}, opset=21)
xs = S(["12", "-3", "100.5", "9223372036854775807"])
case("cast_string_to_int64_21", helper.make_node("Cast", ["x"], ["y"], to=7), {"x": xs},
     {"y": np.array([12, -3, 100, 9223372036854775807], np.int64)}, opset=21)

# ---- Equal 19 (strings added) ------------------------------------------------
a, b = S(["string1", "string2"]), S(["string1", "string3"])
case("equal_string", helper.make_node("Equal", ["x", "y"], ["z"]), {"x": a, "y": b},
     {"z": a == b}, opset=19)
b1 = S(["string1"])
case("equal_string_broadcast", helper.make_node("Equal", ["x", "y"], ["z"]), {"x": a, "y": b1},
     {"z": a == b1}, opset=19)

# ---- Unique over strings ----------------------------------------------------
u = S(["b", "a", "", "b", "日本", "a", "b"])
vals, first, inv, cnt = np.unique(u.astype(str), return_index=True, return_inverse=True,
                                  return_counts=True)
case("unique_strings_sorted", helper.make_node("Unique", ["x"], ["y", "i", "inv", "c"]),
     {"x": u}, {"y": S(list(vals)), "i": first.astype(np.int64), "inv": inv.astype(np.int64),
                "c": cnt.astype(np.int64)}, opset=11)
order = sorted(range(len(vals)), key=lambda k: first[k])  # slots by first occurrence
slot = {k: j for j, k in enumerate(order)}
case("unique_strings_unsorted", helper.make_node("Unique", ["x"], ["y", "i", "inv", "c"], sorted=0),
     {"x": u}, {"y": S([vals[k] for k in order]), "i": first[order].astype(np.int64),
                "inv": np.array([slot[k] for k in inv], np.int64),
                "c": cnt[order].astype(np.int64)}, opset=11)

# ---- element-moving ops carry strings (deep copies) ---------------------------
w = S([["a", "bb", ""], ["日本", "e", "f"]])
I64 = np.int64
movers = [
    ("transpose", helper.make_node("Transpose", ["x"], ["y"]), {}, w.T),
    ("reshape", helper.make_node("Reshape", ["x", "s"], ["y"]), {"s": np.array([3, 2], I64)},
     w.reshape(3, 2)),
    ("gather", helper.make_node("Gather", ["x", "i"], ["y"], axis=1),
     {"i": np.array([2, 0, 0], I64)}, w[:, [2, 0, 0]]),
    ("concat", helper.make_node("Concat", ["x", "x"], ["y"], axis=0), {}, np.concatenate([w, w])),
    ("slice", helper.make_node("Slice", ["x", "st", "en"], ["y"]),
     {"st": np.array([0, 1], I64), "en": np.array([2, 3], I64)}, w[0:2, 1:3]),
    ("tile", helper.make_node("Tile", ["x", "r"], ["y"]), {"r": np.array([2, 1], I64)},
     np.tile(w, (2, 1))),
    ("expand", helper.make_node("Expand", ["x", "s"], ["y"]), {"s": np.array([2, 2, 3], I64)},
     np.broadcast_to(w, (2, 2, 3))),
    ("pad", helper.make_node("Pad", ["x", "p"], ["y"]), {"p": np.array([0, 1, 1, 0], I64)},
     np.pad(w, ((0, 1), (1, 0)), constant_values="")),
    ("where", helper.make_node("Where", ["c", "x", "z"], ["y"]),
     {"c": np.array([True, False, True]), "z": S(["z1", "z2", "z3"])},
     np.where([True, False, True], w, S(["z1", "z2", "z3"]))),
    ("scatter_elements", helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=1),
     {"i": np.array([[1], [2]], I64), "u": S([["U"], ["V"]])},
     S([["a", "U", ""], ["日本", "e", "V"]])),
]
for name, node, extra, want in movers:
    ins = {"x": w}
    ins.update(extra)
    if name == "where":  # inputs in the node's order
        ins = {"c": extra["c"], "x": w, "z": extra["z"]}
    case("strings_" + name, node, ins, {"y": S(np.asarray(want, dtype=object))}, opset=18)

tri = S([["a", "b", "c"], ["d", "e", "f"], ["g", "h", "i"]])
case("strings_trilu_lower", helper.make_node("Trilu", ["x"], ["y"], upper=0), {"x": tri},
     {"y": S(np.where(np.tril(np.ones((3, 3), bool)), tri, ""))}, opset=14)
d = S(["c%d" % i for i in range(8)]).reshape(1, 8, 1, 1)
b = 2
case("strings_depth_to_space", helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=b),
     {"x": d}, {"y": S(d.reshape(1, b, b, 2, 1, 1).transpose(0, 3, 4, 1, 5, 2).reshape(1, 2, 2, 2))},
     opset=13)
sp = S(["p%d" % i for i in range(8)]).reshape(1, 2, 2, 2)
case("strings_space_to_depth", helper.make_node("SpaceToDepth", ["x"], ["y"], blocksize=b),
     {"x": sp}, {"y": S(sp.reshape(1, 2, 1, b, 1, b).transpose(0, 3, 5, 1, 2, 4).reshape(1, 8, 1, 1))},
     opset=13)

# ---- sequences and Scan carry strings -----------------------------------------
from onnx import TensorProto  # noqa: E402

seq = [helper.make_node("SequenceConstruct", ["x", "x"], ["s"]),
       helper.make_node("ConcatFromSequence", ["s"], ["c"], axis=0),
       helper.make_node("SplitToSequence", ["c"], ["p"], axis=1, keepdims=0),
       helper.make_node("SequenceAt", ["p", "i"], ["y"])]
case("strings_sequences", seq, {"x": w, "i": np.array(-1, I64)},
     {"y": S(np.concatenate([w, w])[:, -1])}, opset=18)

bang = helper.make_tensor("bang", TensorProto.STRING, [], [b"!"])
body = helper.make_graph(
    [helper.make_node("StringConcat", ["e", "bang"], ["o"])], "body",
    [helper.make_tensor_value_info("e", TensorProto.STRING, [])],
    [helper.make_tensor_value_info("o", TensorProto.STRING, [])], initializer=[bang])
xs = S(["a", "", "日本"])
case("strings_scan", helper.make_node("Scan", ["x"], ["y"], body=body, num_scan_inputs=1),
     {"x": xs}, {"y": S([v + "!" for v in xs])}, opset=20)

# ---- TfIdfVectorizer over string tokens (pool_strings) --------------------------


def tfidf(rows, pool, counts, indexes, min_n, max_n, skip, mode, weights=None):
    grams = []  # (n-gram tuple, column) in pool order
    bounds = list(counts) + [len(pool)]
    j = 0
    for level in range(len(counts)):
        n = level + 1
        for g in range(bounds[level], bounds[level + 1], n):
            grams.append((tuple(pool[g:g + n]), indexes[j]))
            j += 1
    width = max(indexes) + 1
    out = np.zeros((len(rows), width), np.float32)
    for r, toks in enumerate(rows):
        for start in range(len(toks)):
            for n in range(min_n, max_n + 1):
                for s in range(1 if n == 1 else skip + 1):
                    step = s + 1
                    if start + (n - 1) * step >= len(toks):
                        break
                    gram = tuple(toks[start + k * step] for k in range(n))
                    col = next((c for g, c in grams if g == gram), None)
                    if col is not None:
                        out[r, col] += 1
    w = np.ones(width, np.float32) if weights is None else np.array(weights, np.float32)
    if mode == "IDF":
        out = np.where(out > 0, w, 0).astype(np.float32)
    elif mode == "TFIDF":
        out = out * w
    return out


rows = [["a", "b", "c", "x"], ["b", "c", "b", "c"], ["日本", "a", "b", "a"]]
pool = ["a", "b", "c", "日本", "a", "b", "b", "c", "日本", "a"]
for mode, skip in (("TF", 0), ("TFIDF", 1), ("IDF", 0)):
    weights = [0.5, 1, 2, 3, 4, 5, 6] if mode != "TF" else None
    attrs = dict(min_gram_length=1, max_gram_length=2, max_skip_count=skip, mode=mode,
                 ngram_counts=[0, 4], ngram_indexes=[0, 1, 2, 3, 4, 5, 6], pool_strings=pool)
    if weights:
        attrs["weights"] = weights
    case("tfidf_strings_" + mode.lower(), helper.make_node("TfIdfVectorizer", ["x"], ["y"], **attrs),
         {"x": S(rows)}, {"y": tfidf(rows, pool, [0, 4], list(range(7)), 1, 2, skip, mode, weights)},
         opset=9)

nz = S([["a", ""], ["", "日本"], ["x", "y"]])
case("strings_nonzero", helper.make_node("NonZero", ["x"], ["y"]), {"x": nz},
     {"y": np.array(np.nonzero(nz != ""), np.int64)}, opset=13)
