# An offline install with Debian's setuptools:
#   pip install --no-index --no-build-isolation --target DIR ./python
# (Debian's pip refuses the system's site-packages), or in place: PYTHONPATH=python. libait.so is found at
# $AIT_LIBRARY, next to the package, or in the source tree's build/.
from setuptools import setup

setup(name="ait", version="0.1.0", description="ait: ahead-of-time inference tuner (ctypes binding)",
      packages=["ait"], install_requires=[], python_requires=">=3.9")
