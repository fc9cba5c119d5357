"""Python operators by what they do to tensors (libcst operator classes, for ``isinstance``)."""

from __future__ import annotations

import libcst as cst

#: Arithmetic operators that work elementwise and broadcast their operands.
ARITHMETIC_OPERATORS = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.Power, cst.FloorDivide, cst.Modulo)
#: Comparison operators that work elementwise (``is``/``in`` are not among them).
COMPARISON_OPERATORS = (cst.Equal, cst.NotEqual, cst.LessThan, cst.LessThanEqual, cst.GreaterThan,
                        cst.GreaterThanEqual)

#: The token of each binary operator class (``cst.Add`` -> ``+``), read without generating code.
BINARY_TOKENS: dict[type, str] = {
    cst.Add: "+", cst.Subtract: "-", cst.Multiply: "*", cst.Divide: "/", cst.Power: "**", cst.FloorDivide: "//",
    cst.Modulo: "%", cst.MatrixMultiply: "@", cst.BitAnd: "&", cst.BitOr: "|", cst.BitXor: "^",
    cst.LeftShift: "<<", cst.RightShift: ">>",
}
