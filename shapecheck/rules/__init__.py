"""The rule catalog. Importing this package registers every rule: one module per rule, by family.

``python scripts/new_rule.py CODE NAME`` adds a rule module and its line here.
"""

# ruff: noqa: F401  (each import registers the rule its module defines)
from shapecheck.rules.autograd import (
    sc301_inplace_on_leaf,
    sc302_inplace_on_saved_tensor,
    sc303_data_attribute,
    sc304_backward_on_non_scalar,
    sc305_grad_on_integer_tensor,
    sc306_non_differentiable_loss,
    sc307_parameter_in_forward,
    sc308_training_loop_gradients,
    sc309_numpy_on_grad_tensor,
    sc310_legacy_data_attribute,
)
from shapecheck.rules.device import (
    sc401_cross_device_operation,
    sc402_discarded_device_move,
    sc403_factory_without_device,
    sc404_numpy_on_cuda,
)
from shapecheck.rules.einsum import (
    sc501_einsum_syntax,
    sc502_einsum_operand_count,
    sc503_einsum_shape_mismatch,
)
from shapecheck.rules.layout import (
    sc101_view_on_non_contiguous,
    sc102_view_multiple_inferred,
    sc103_view_size_mismatch,
)
from shapecheck.rules.meta import sc998_unused_noqa
from shapecheck.rules.pitfall import (
    sc601_python_bool_on_tensor,
    sc602_item_on_non_scalar,
    sc603_item_in_loop,
    sc604_list_of_tensor,
    sc605_inverse_then_matmul,
)
from shapecheck.rules.shape import (
    sc201_reduction_without_keepdim,
    sc202_broadcast_mismatch,
    sc203_matmul_shape_mismatch,
    sc204_reduction_tuple_as_tensor,
    sc205_squeeze_without_dim,
    sc206_return_shape_mismatch,
)
