#!/usr/bin/python3
"""Writes the spec node tests: every cases_*.py module beside this file, one
per op family, each calling spec_case.case() for the examples of the op
versions it covers. ait-node-tests runs them (ctest: spec_node_tests).
usage: /usr/bin/python3 tests/spec/gen.py OUTDIR"""
import glob
import importlib
import os
import shutil
import sys
import warnings

warnings.simplefilter("ignore")
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import spec_case  # noqa: E402

if len(sys.argv) != 2:
    sys.exit(__doc__)
out = sys.argv[1]
shutil.rmtree(out, ignore_errors=True)
os.makedirs(out)
spec_case.OUT = out
for path in sorted(glob.glob(os.path.join(here, "cases_*.py"))):
    importlib.import_module(os.path.basename(path)[:-3])
print("spec tests: %d written to %s" % (len(spec_case._names), out))
