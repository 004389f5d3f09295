#!/usr/bin/python3
"""Writes the official ONNX node conformance tests with Debian's python3-onnx.
usage: /usr/bin/python3 tools/gen_node_tests.py OUTDIR   (tests land in OUTDIR/node)"""
import sys
import warnings

import numpy as np

# onnx 1.12's test generators use aliases that numpy 1.24 removed.
warnings.simplefilter("ignore")
for alias, typ in (("float", float), ("int", int), ("bool", bool), ("object", object)):
    if alias not in np.__dict__:
        setattr(np, alias, typ)

from onnx.backend.test import cmd_tools  # noqa: E402

if len(sys.argv) != 2:
    sys.exit(__doc__)
sys.argv = [sys.argv[0], "generate-data", "-o", sys.argv[1]]
cmd_tools.main()
