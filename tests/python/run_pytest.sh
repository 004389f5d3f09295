#!/bin/sh
# ctest's way into pytest (Debian's python3-pytest): skipped (77) when it is missing.
/usr/bin/python3 -c 'import pytest' 2>/dev/null || {
  echo "skipped: no pytest (Debian python3-pytest; tools/setup installs it)"; exit 77; }
exec /usr/bin/python3 -m pytest -q -p no:cacheprovider -rs "$@"
