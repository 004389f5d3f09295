#!/usr/bin/python3
"""Models without scope names, for the module tree's fallback segmentation
(tests/unit/test_modules.c): unscoped copies of the exported resnet18 and
mobilenetv2, and torchvision's mobilenet_v3_small and shufflenet_v2_x1_0
exported with random weights (nothing downloaded), every node renamed
"nK" so that no name carries a scope.

usage: /usr/bin/python3 tests/unit/make_unscoped_models.py OUTDIR MODELS_DIR
"""
import os
import sys

import onnx


def strip(m):
    for i, n in enumerate(m.graph.node):
        n.name = "n%d" % i
    return m


def main():
    out, models = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    for name in ("resnet18", "mobilenetv2"):
        onnx.save(strip(onnx.load(os.path.join(models, name + ".onnx"))),
                  os.path.join(out, name + ".onnx"))
    import torch
    import torchvision
    torch.manual_seed(0)
    for name in ("mobilenet_v3_small", "shufflenet_v2_x1_0"):
        path = os.path.join(out, name + ".onnx")
        if os.path.exists(path):
            continue
        net = getattr(torchvision.models, name)(weights=None).eval()
        tmp = path + ".tmp"
        torch.onnx.export(net, torch.randn(1, 3, 224, 224), tmp, opset_version=17,
                          input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
        onnx.save(strip(onnx.load(tmp)), path)
        os.remove(tmp)


if __name__ == "__main__":
    main()
