#!/usr/bin/env bash
# CLI tests on resnet18 (a model with a deep module tree): the inspection's
# table, its batch axes, --select and --top, a dry-run tune's module list and
# a real tune of layer4. Registered in the Release build only
# (tests/CMakeLists.txt): under ASan these five whole-model inspections and
# the tune took 105 of the 127 CPU seconds that cli_tests took with them;
# there cli_qconv still tunes resnet18's layer1 (a whole-model reference run,
# the Conv modules' candidates) and model_tests runs the whole model.
# usage: test_resnet_cli.sh AIT TEST_DATA_DIR
set -u
ait=$1 data=$2
. "$(dirname "$0")/check.sh"

r18=$data/models/resnet18.onnx
if [ ! -f "$r18" ]; then echo "skipped: no $r18"; exit 77; fi
check inspect-resnet 0 "layer1\.0\.conv1 +1 +36\.9K +144 KiB +231M" "$ait" inspect "$r18" --runs 1 --max-depth 3
check inspect-resnet-axes 0 "inputs\[0\] .*\[batch0,64,56,56\] +\[1,64,56,56\] +\[2,64,56,56\]" \
  "$ait" inspect "$r18" --runs 1 --batch-sizes 1,2 --module layer1.0
check inspect-resnet-select 0 "^\* +layer1\.1 .* first-wins" "$ait" inspect "$r18" --runs 1 --select 'layer1.*=first-wins' --max-depth 2
check inspect-resnet-top 0 "2 modules" "$ait" inspect "$r18" --runs 1 --top 2 --max-depth 1
check tune-resnet 0 "== module 'layer4\.0'" "$ait" tune "$r18" --dry-run --runs 1 --select 'layer4.*'
# A real tune of two blocks with both backends at 1 and 2 threads: every
# candidate validates, and a choice is reported (which one is timing's call).
check tune-resnet-real 0 "summary" "$ait" tune "$r18" --runs 1 --select 'layer4.*' --threads 2 \
  --warmup 1 --window 3 --cap 5
finish
