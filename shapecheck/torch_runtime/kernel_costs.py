"""A cost model of the kernels ``shapecheck.einsum``'s plans run, measured on CPU.

Where a contraction can run in two orientations, ``[M, K] x [K, N]`` or the swapped
``[N, K] x [K, M]`` followed by a copy into the layout ``torch.einsum`` returns, the plan bound
to a call's sizes takes the one this model says is cheaper (see ``layout.py``). The model:

- an ``mm``/``bmm``/``matmul`` of ``batch`` products ``[M, K] x [K, N]`` costs
  ``MM_CALL_US + MM_US_PER_MAC * batch*M*K*N * (1 + MM_K_HALF / K) * (1 + MM_N_HALF / N)``:
  BLAS is several times slower per multiply-add when the output's rows are short (small N) or
  the summed dim is short (small K); a tall ``[65536, 8] x [8, 8]`` took 953 us (model 771)
  where the wide ``[8, 8] x [8, 65536]`` took 276 us (model 230), ``[256, 256] x [256, 256]``
  402 us (model 370), ``[8, 8] x [8, 8]`` 2.0 us (model 2.2);
- making ``elements`` contiguous from a permuted view (``(b, g, n)`` to ``(b, n, g)``, the copy
  a swapped plan ends with, or the one a reshape makes of an operand whose dims to flatten are
  not adjacent in memory) costs ``COPY_CALL_US + COPY_US_PER_ELEMENT * elements``: 262,144
  elements took 196 us (model 215), 2,097,152 took 2,092 us (model 1,701).

For a call autograd records, a chain's plan is also weighed on its backward pass: each
product's two backward products priced by the same ``mm_cost``, and the copies only the
backward makes priced by ``copy_cost`` (see ``plan.compile_plan``'s ``grad_cost``).

The constants were fitted (least squares on relative error) by
``python benchmarks/kernel_costs.py`` (torch 2.13 CPU, float32, one thread, a shared 2-core
machine), which prints each measured time next to the model's. The model only ranks two plans
of one contraction; its absolute numbers are rough (within about 2x).
"""

from __future__ import annotations

MM_CALL_US = 2.09
MM_US_PER_MAC = 1.93e-5
MM_K_HALF = 14.5
MM_N_HALF = 19.0
COPY_CALL_US = 3.23
COPY_US_PER_ELEMENT = 8.1e-4


def mm_cost(batch: int, m: int, k: int, n: int) -> float:
    """Estimated microseconds of ``batch`` products ``[m, k] x [k, n]``."""
    slowdown = (1.0 + MM_K_HALF / max(k, 1)) * (1.0 + MM_N_HALF / max(n, 1))
    return MM_CALL_US + MM_US_PER_MAC * batch * m * k * n * slowdown


def copy_cost(elements: int) -> float:
    """Estimated microseconds of making ``elements`` contiguous from a permuted view."""
    return COPY_CALL_US + COPY_US_PER_ELEMENT * elements


def flatten_cost(elements: int) -> float:
    """Estimated microseconds of a reshape that copies an operand of ``elements`` (its dims to
    flatten are not adjacent in memory): the same copy as :func:`copy_cost`'s, kept apart so
    that a plan's own copies and the copy into torch's layout can be weighed separately."""
    return COPY_CALL_US + COPY_US_PER_ELEMENT * elements
