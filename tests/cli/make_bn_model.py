"""A small Conv + BatchNorm + ReLU network as torch's exporter writes it with
the BatchNormalization nodes kept (training=PRESERVE in eval mode, no
constant folding): native folds each into its Conv's packed weights.
Usage: make_bn_model.py OUT.onnx"""
import sys

import torch

torch.manual_seed(3)
S = torch.nn.Sequential
net = S(S(torch.nn.Conv2d(3, 13, 3, padding=1), torch.nn.BatchNorm2d(13), torch.nn.ReLU()),
        S(torch.nn.Conv2d(13, 7, 1, bias=False), torch.nn.BatchNorm2d(7)))
for m in net.modules():
    if isinstance(m, torch.nn.BatchNorm2d):  # statistics that are not the identity
        m.running_mean.uniform_(-1, 1)
        m.running_var.uniform_(0.5, 2)
        m.weight.data.uniform_(0.5, 1.5)
        m.bias.data.uniform_(-1, 1)
net.eval()
torch.onnx.export(net, torch.randn(1, 3, 12, 12), sys.argv[1], input_names=["x"],
                  output_names=["y"], opset_version=15, do_constant_folding=False,
                  training=torch.onnx.TrainingMode.PRESERVE)
