"""CUDA's dropout on the CPU: on CPU ``F.dropout`` saves a float mask (it is ``input * bernoulli``), while on CUDA
it goes through ``native_dropout`` and saves a *bool* mask. Measurements on the CPU replace every nn.Dropout by
:class:`NativeDropout` so that what autograd saves is what a GPU saves."""
import torch
import torch.nn as nn


class NativeDropout(nn.Module):
    """nn.Dropout replacement that behaves like CUDA's F.dropout.

    CUDA ``at::dropout`` uses ``native_dropout`` iff ``0 < p < 1`` and
    ``numel > 0``; it returns the input unchanged when ``p == 0`` or not
    training.  ``native_dropout`` saves only its bool mask (``result1``).
    """

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        self.p = float(p)
        self.inplace = inplace  # ignored: native_dropout is out-of-place

    def forward(self, x):
        if not self.training or self.p == 0.0 or x.numel() == 0:
            return x
        if self.p == 1.0:  # not the fused path on CUDA either
            return x * torch.zeros_like(x)
        return torch.native_dropout(x, self.p, True)[0]

    def extra_repr(self):
        return f"p={self.p}"


def replace_dropout(module):
    """Replace every nn.Dropout (recursively, in place) by NativeDropout."""
    for name, child in list(module.named_children()):
        if isinstance(child, nn.Dropout):
            setattr(module, name, NativeDropout(child.p, child.inplace))
        else:
            replace_dropout(child)
    return module
