"""Bug case: SMPL blend shapes with a shape-direction tensor holding more components than betas.

Source: https://github.com/xy02-05/ScoreHypo/issues/6
What goes wrong: `betas` has 10 coefficients but `shape_disps` keeps all 300 components; subscript l has two sizes
and einsum raises
The fix: slice the shape directions to `betas.shape[1]` components
Verified with torch 2.13 on CPU: demo() raises RuntimeError.
"""
import torch


def blend_shapes(betas, shape_disps):
    blend_shape = torch.einsum("bl,mkl->bmk", [betas, shape_disps])
    return blend_shape


def lbs(betas, v_template, shapedirs):
    return v_template + blend_shapes(betas, shapedirs)


def demo():
    v = lbs(torch.randn(2, 10), torch.randn(6, 3), torch.randn(6, 3, 300))
    return tuple(v.shape) == (2, 6, 3)
