"""Shared fixtures of the Python tests (ctest python_binding, report_html):
a small PyTorch module exported to ONNX, and the paths ctest passes in the
environment (AIT_BIN: the ait command; AIT_LIBRARY: libait.so)."""
import os
import subprocess

import numpy as np
import pytest


@pytest.fixture(scope="session")
def ait_bin():
    b = os.environ.get("AIT_BIN")
    if not b:
        pytest.skip("AIT_BIN is not set: run these tests through ctest")
    return b


@pytest.fixture(scope="session")
def torch_model(tmp_path_factory):
    """(path, torch module, example input): two Linear layers named fc1, fc2
    and a ReLU, batch axis dynamic, exported with PyTorch."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = torch.nn.Linear(32, 64)
            self.fc2 = torch.nn.Linear(64, 8)

        def forward(self, x):
            return self.fc2(torch.relu(self.fc1(x)))

    net = Net().eval()
    path = str(tmp_path_factory.mktemp("torch") / "net.onnx")
    x = torch.randn(2, 32)
    torch.onnx.export(net, (x,), path, input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}}, opset_version=13)
    return path, net, x.numpy()


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kw)
