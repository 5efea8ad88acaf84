"""THE op table: one entry per elementwise or reduction op, with its scalar forward, its derivative
in the same small vocabulary (g: incoming gradient, out: result, a, b, ...: inputs) and torch's node
name. Kernels, backward nodes, double backward and the op tests are all generated from here."""
from dataclasses import dataclass, field

# A derivative torch does not define: backward raises "derivative for aten::<op> is not implemented"; the
# node recording such an op has torch's name for it.
NOT_IMPLEMENTED = "not_implemented"
NOT_IMPLEMENTED_NODE = "torch::autograd::NotImplemented"

# Test domains: how the generated tests draw inputs for each operand.
REAL, POSITIVE, NONZERO, UNIT, AWAY_FROM_TIES = "real", "positive", "nonzero", "unit", "distinct"
PROBABILITY = "probability"  # inside (0, 1)


@dataclass(frozen=True)
class Elementwise:
    name: str
    inputs: tuple
    forward: str
    grads: dict  # input name -> derivative expression; "zeros" when the op is flat
    node: str
    kind: str = "same"  # "float": integer inputs compute in the default float; "compare": bool result
    saved_names: dict = field(default_factory=dict)  # input -> torch's _saved_ suffix where not self/other
    scalar_only: tuple = ()  # inputs that are always Python scalars (exponent, clamp bounds)
    options: tuple = ()  # scalar-only inputs that are options, not operands: they take no part in type promotion
    bool_inputs: tuple = ()  # inputs read as bool (where's condition)
    domain: dict = field(default_factory=dict)
    refuses: dict = field(default_factory=dict)  # compute dtype name -> (exception, torch's message)
    internal: bool = False  # a variant another function chooses (pow_tensor for pow, gelu_tanh for gelu)
    aten: str = ""  # torch's operator name, where it differs from `name` (errors name it)
    # input name -> {its dtype name -> (exception, torch's message)}: torch's derivative formula does something
    # that dtype refuses (pow's `exponent - 1` on a bool exponent), so the backward raises
    backward_refuses: dict = field(default_factory=dict)
    # the inputs whose wanted gradient makes backward_refuses raise (empty: any wanted gradient); `{default}` in a
    # message is the default dtype's word
    refusal_blocks: tuple = ()
    c_order: bool = False  # torch's result is C-contiguous whatever its inputs' layout (masked_fill clones so)
    # torch's backward op whose own derivative it does not define (hardsigmoid_backward): with create_graph the
    # gradient is recorded by a node that raises when differentiated
    backward_aten: str = ""
    # inputs that torch's derivative formula combines with a number in their own dtype (addcmul's `tensor2 * value`
    # wraps in int8): a node saving one of them as an integer tensor evaluates its derivatives as tensor ops,
    # which compute that product in the integer dtype as torch's do (the backward kernel computes in float)
    integer_arithmetic: tuple = ()

    @property
    def forward_outputs(self):
        return (("out", self.forward),)

    @property
    def published(self):
        """numgrad.<name>(input[, other]) and Tensor.<name> come straight from this entry (ops/functional.py
        and tensor.py); entries with scalar-only or bool inputs have hand-written signatures instead."""
        return not self.internal and not self.scalar_only and not self.bool_inputs


def _e(name, inputs, forward, grads, node, **kw):
    ELEMENTWISE[name] = Elementwise(name, tuple(inputs.split()), forward, grads, node, **kw)


ELEMENTWISE = {}
SUB_BOOL = ("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, "
            "use the `~` or `logical_not()` operator instead.")
SQRT_2_OVER_PI, GELU_C = 0.7978845608028654, 0.044715
_NO_INT_GELU = {"int64": (NotImplementedError, '"GeluKernelImpl" not implemented for \'Long\''),
                "bool": (NotImplementedError, '"GeluKernelImpl" not implemented for \'Bool\'')}
_gelu_t = f"tanh({SQRT_2_OVER_PI} * (a + {GELU_C} * a * a * a))"

_e("add", "a b", "a + b", {"a": "g", "b": "g"}, "AddBackward0")
_e("sub", "a b", "a - b", {"a": "g", "b": "-g"}, "SubBackward0")
_e("rsub", "a b", "b - a", {"a": "-g"}, "RsubBackward1", scalar_only=("b",))
# torch.rsub(t, other) with a tensor other: other - t as an op of its own (RsubBackward0)
_e("rsub_tensor", "a b", "b - a", {"a": "-g", "b": "g"}, "RsubBackward0", internal=True)
_e("mul", "a b", "a * b", {"a": "g * b", "b": "g * a"}, "MulBackward0")
_e("div", "a b", "a / b", {"a": "g / b", "b": "-g * ((a / b) / b)"}, "DivBackward0", kind="float",
   domain={"b": NONZERO})
# pow: exponent 0 has derivative 0 everywhere (torch avoids 0 * inf at a == 0)
_e("pow", "a b", "scalar_power(a, b)", {"a": "where(b == 0, 0, g * b * scalar_power(a, b - 1))"}, "PowBackward0",
   saved_names={"b": "exponent"}, scalar_only=("b",), domain={"a": POSITIVE})
# a bool exponent: torch's pow_backward takes its shortcut for a zero exponent only for numbers, so x ** False
# gives g * 0 * x ** -1, NaN at x == 0
_e("pow_bool", "a b", "scalar_power(a, b)", {"a": "g * b * scalar_power(a, b - 1)"}, "PowBackward0",
   saved_names={"b": "exponent"}, scalar_only=("b",), internal=True)
# the exponent's gradient multiplies g outside torch's where (a NaN g stays NaN at 0 ** 0), the base's inside
_e("pow_tensor", "a b", "power(a, b)", {"a": "where(b == 0, 0, g * b * power(a, b - 1))",
                                         "b": "g * where((a == 0) & (b >= 0), 0, out * log(a))"},
   "PowBackward1", saved_names={"b": "exponent"}, domain={"a": POSITIVE},
   refuses={"bool": (NotImplementedError, '"pow" not implemented for \'Bool\'')}, internal=True,
   backward_refuses={"b": {"bool": (RuntimeError, SUB_BOOL)}})
_e("rpow", "a b", "power(b, a)", {"a": "g * where((b == 0) & (a >= 0), 0, out * log(b))"}, "PowBackward2",
   saved_names={"a": "exponent", "b": "self"}, scalar_only=("b",), internal=True,
   refuses={"bool": (NotImplementedError, '"pow" not implemented for \'Bool\'')})  # True ** bools; bools ** True is fine
# a tensor times or over a number inside torch's C++ composites (at::mul(Tensor, Scalar): trapezoid's dx): nodes
# of their own; Python's `t * 2` is mul's MulBackward0
_e("mul_scalar", "a b", "a * b", {"a": "g * b"}, "MulBackward1", saved_names={"b": "other"}, scalar_only=("b",),
   internal=True)
_e("div_scalar", "a b", "a / b", {"a": "g / b"}, "DivBackward1", kind="float", saved_names={"b": "other"},
   scalar_only=("b",), internal=True)
_e("neg", "a", "-a", {"a": "-g"}, "NegBackward0")
_e("exp", "a", "exp(a)", {"a": "g * out"}, "ExpBackward0", kind="float")
_e("log", "a", "log(a)", {"a": "g / a"}, "LogBackward0", kind="float", domain={"a": POSITIVE})
_e("log1p", "a", "log1p(a)", {"a": "g / (a + 1)"}, "Log1PBackward0", kind="float", domain={"a": POSITIVE})
_e("expm1", "a", "expm1(a)", {"a": "g * (out + 1)"}, "Expm1Backward0", kind="float")
_e("sqrt", "a", "sqrt(a)", {"a": "g / (2 * out)"}, "SqrtBackward0", kind="float", domain={"a": POSITIVE})
_e("rsqrt", "a", "1 / sqrt(a)", {"a": "-0.5 * g * (out * out * out)"}, "RsqrtBackward0", kind="float",
   domain={"a": POSITIVE})
_e("sin", "a", "sin(a)", {"a": "g * cos(a)"}, "SinBackward0", kind="float")
_e("cos", "a", "cos(a)", {"a": "-g * sin(a)"}, "CosBackward0", kind="float")
_e("tan", "a", "tan(a)", {"a": "g * (1 + out * out)"}, "TanBackward0", kind="float", domain={"a": UNIT})
_e("tanh", "a", "tanh(a)", {"a": "g * (1 - out * out)"}, "TanhBackward0", kind="float")
_e("atan", "a", "atan(a)", {"a": "g / (a * a + 1)"}, "AtanBackward0", kind="float")
_e("sigmoid", "a", "sigmoid(a)", {"a": "g * (1 - out) * out"}, "SigmoidBackward0", kind="float")
# relu'(0) = 0; NaN passes through, forward and backward, as in torch; relu(-0.0) is -0.0 (clamp_min)
_e("relu", "a", "where(a < 0, 0, a)", {"a": "where(out <= 0, 0, g)"}, "ReluBackward0",
   refuses={"bool": (RuntimeError, "Boolean inputs not supported for relu")})
_e("abs", "a", "abs(a)", {"a": "g * sign(a)"}, "AbsBackward0",  # abs'(0) = sign(0) = 0
   refuses={"bool": (NotImplementedError, '"abs_cpu" not implemented for \'Bool\'')})
_e("sign", "a", "sign(a)", {"a": "zeros"}, "SignBackward0")
_e("reciprocal", "a", "1 / a", {"a": "-g * (out * out)"}, "ReciprocalBackward0", kind="float",
   domain={"a": NONZERO})
def _no_bool(kernel):
    """torch's refusal of a bool computation by a kernel that has no bool type."""
    return {"bool": (NotImplementedError, f'"{kernel}" not implemented for \'Bool\'')}


# clamp passes the gradient at its boundaries (a == min or a == max); with Number bounds a bool result has no
# kernel (bool bounds on a bool tensor; an int bound makes it int64)
_clamp_a = "where((a >= lo) & (a <= hi), g, 0)"
_e("clamp", "a lo hi", "minimum(maximum(a, lo), hi)", {"a": _clamp_a}, "ClampBackward1",
   saved_names={"lo": "min", "hi": "max"}, scalar_only=("lo", "hi"), refuses=_no_bool("clamp_scalar_cpu"))
_e("clamp_min", "a lo", "maximum(a, lo)", {"a": "where(a >= lo, g, 0)"}, "ClampBackward1",
   saved_names={"lo": "min"}, scalar_only=("lo",), refuses=_no_bool("clamp_min_scalar_cpu"))
_e("clamp_max", "a hi", "minimum(a, hi)", {"a": "where(a <= hi, g, 0)"}, "ClampBackward1",
   saved_names={"hi": "max"}, scalar_only=("hi",), refuses=_no_bool("clamp_max_scalar_cpu"))
# torch.clamp_min / clamp_max (and their methods) are ops of their own: the same math, their own nodes
_e("clamp_min_fn", "a lo", "maximum(a, lo)", {"a": "where(a >= lo, g, 0)"}, "ClampMinBackward0",
   saved_names={"lo": "min"}, scalar_only=("lo",), internal=True, refuses=_no_bool("clamp_min_scalar_cpu"))
_e("clamp_max_fn", "a hi", "minimum(a, hi)", {"a": "where(a <= hi, g, 0)"}, "ClampMaxBackward0",
   saved_names={"hi": "max"}, scalar_only=("hi",), internal=True, refuses=_no_bool("clamp_max_scalar_cpu"))
_e("clamp_tensor", "a lo hi", "minimum(maximum(a, lo), hi)",
   # with min > max the result is max everywhere: torch sends the gradient to max only
   {"a": _clamp_a, "lo": "where((a < lo) & (lo < hi), g, 0)", "hi": "where((a > hi) | (hi < lo), g, 0)"},
   "ClampBackward0", saved_names={"lo": "min", "hi": "max"}, domain={"a": AWAY_FROM_TIES},
   refuses={"bool": (NotImplementedError, '"clamp_cpu" not implemented for \'Bool\'')}, internal=True)
# torch.clamp_min / clamp_max with a Tensor bound: nodes of their own; the gradient goes to the side that won
_e("clamp_min_tensor", "a lo", "maximum(a, lo)", {"a": "where(a >= lo, g, 0)", "lo": "where(a < lo, g, 0)"},
   "ClampMinBackward1", saved_names={"lo": "min"}, domain={"a": AWAY_FROM_TIES}, internal=True)
_e("clamp_max_tensor", "a hi", "minimum(a, hi)", {"a": "where(a <= hi, g, 0)", "hi": "where(a > hi, g, 0)"},
   "ClampMaxBackward1", saved_names={"hi": "max"}, domain={"a": AWAY_FROM_TIES}, internal=True)
# ties split the gradient evenly between the two sides; a NaN on either side passes g to both, as in torch
_e("maximum", "a b", "maximum(a, b)", {"a": "where(a == b, g / 2, where(a < b, 0, g))",
                                        "b": "where(a == b, g / 2, where(b < a, 0, g))"},
   "MaximumBackward0", domain={"a": AWAY_FROM_TIES})
_e("minimum", "a b", "minimum(a, b)", {"a": "where(a == b, g / 2, where(a > b, 0, g))",
                                        "b": "where(a == b, g / 2, where(b > a, 0, g))"},
   "MinimumBackward0", domain={"a": AWAY_FROM_TIES})
_e("where", "c a b", "where(c, a, b)", {"a": "where(c, g, 0)", "b": "where(c, 0, g)"}, "WhereBackward0",
   saved_names={"c": "condition"}, bool_inputs=("c",))
# a number into a floating tensor where the mask holds (Tensor.masked_fill; other dtypes and a tensor value take
# ops/indexing.py's path): an entry of its own so that it fuses, as a causal mask before softmax does
_e("masked_fill", "a c v", "where(c, v, a)", {"a": "where(c, 0, g)"}, "MaskedFillBackward0",
   saved_names={"c": "mask"}, scalar_only=("v",), bool_inputs=("c",), internal=True, c_order=True)
_e("erf", "a", "erf(a)", {"a": "g * 1.1283791670955126 * exp(-a * a)"}, "ErfBackward0", kind="float")
# x = a / sqrt(2): the density's exp(-x * x) is the one gelu_erf computes (torch: exp(a * a * -0.5), the same to
# an ulp of its argument), so that the kernel computes one exp, not two (GELU's backward 321 -> 180 us on 2^17)
_gelu_x = "(a * 0.7071067811865476)"
_e("gelu", "a", "a * 0.5 * (1 + gelu_erf(a * 0.7071067811865476))",
   {"a": f"g * (0.5 * (1 + gelu_erf({_gelu_x})) + a * 0.3989422804014327 * exp(-({_gelu_x} * {_gelu_x})))"},
   "GeluBackward0", kind="float", refuses=_NO_INT_GELU, internal=True)
_e("gelu_tanh", "a", f"0.5 * a * (1 + {_gelu_t})",
   {"a": f"g * (0.5 * (1 + {_gelu_t}) + 0.5 * a * (1 - {_gelu_t} * {_gelu_t}) * {SQRT_2_OVER_PI} * "
         f"(1 + {3 * GELU_C} * a * a))"},
   "GeluBackward0", kind="float", refuses=_NO_INT_GELU, internal=True)
for _name, _op in (("eq", "=="), ("ne", "!="), ("lt", "<"), ("le", "<="), ("gt", ">"), ("ge", ">=")):
    _e(_name, "a b", f"a {_op} b", {}, "", kind="compare")
# Python's floor semantics, as torch's; torch records it but has no derivative (backward raises)
_e("floor_divide", "a b", "a // b", {"a": NOT_IMPLEMENTED, "b": NOT_IMPLEMENTED}, NOT_IMPLEMENTED_NODE,
   domain={"b": NONZERO}, refuses={"bool": (NotImplementedError, '"div_floor_cpu" not implemented for \'Bool\'')})
# remainder (`%`, the divisor's sign, as Python's) and fmod (the dividend's sign, as C's); torch's derivative
# for the divisor is -g times the quotient rounded the same way; a Python scalar first records no derivative
_NO_BOOL_REMAINDER = {"bool": (NotImplementedError, '"remainder_cpu" not implemented for \'Bool\'')}
_NO_BOOL_FMOD = {"bool": (NotImplementedError, '"fmod_cpu" not implemented for \'Bool\'')}
_e("remainder", "a b", "remainder(a, b)", {"a": "g", "b": "-g * (a // b)"}, "RemainderBackward1",
   domain={"b": NONZERO}, refuses=_NO_BOOL_REMAINDER)
_e("remainder_scalar", "a b", "remainder(a, b)", {"a": "g"}, "RemainderBackward0", scalar_only=("b",),
   refuses=_NO_BOOL_REMAINDER, internal=True)
_e("rremainder", "a b", "remainder(b, a)", {"a": NOT_IMPLEMENTED}, NOT_IMPLEMENTED_NODE, scalar_only=("b",),
   domain={"a": NONZERO}, refuses=_NO_BOOL_REMAINDER, internal=True, aten="remainder")
_e("fmod", "a b", "fmod(a, b)", {"a": "g", "b": "-g * trunc_div(a, b)"}, "FmodBackward1",
   domain={"b": NONZERO}, refuses=_NO_BOOL_FMOD)
_e("fmod_scalar", "a b", "fmod(a, b)", {"a": "g"}, "FmodBackward0", scalar_only=("b",), refuses=_NO_BOOL_FMOD,
   internal=True)
_e("logical_and", "a b", "(a != 0) & (b != 0)", {}, "", kind="compare")
_e("logical_or", "a b", "(a != 0) | (b != 0)", {}, "", kind="compare")
_e("logical_xor", "a b", "(a != 0) != (b != 0)", {}, "", kind="compare")
_e("logical_not", "a", "a == 0", {}, "", kind="compare")
_e("isnan", "a", "isnan(a)", {}, "", kind="compare")
# signbit: the sign bit, so -0.0 and -NaN count as negative (copysign reads the bit)
_e("signbit", "a", "copysign(1, a) < 0", {}, "", kind="compare")
# heaviside: `b` where a is 0, else a > 0 (NaN gives 0); torch defines no derivative (ops/pointwise.py checks dtypes)
_e("heaviside", "a b", "where(a == 0, b, where(a > 0, 1, 0))", {"a": NOT_IMPLEMENTED, "b": NOT_IMPLEMENTED},
   NOT_IMPLEMENTED_NODE, internal=True)


def _no_integers(kernel):
    """torch's refusal of integer and bool inputs by a kernel that has only floating types."""
    return {"int64": (NotImplementedError, f'"{kernel}" not implemented for \'Long\''),
            "bool": (NotImplementedError, f'"{kernel}" not implemented for \'Bool\'')}


# ---- activations (torch.nn.functional); subgradients at the kinks are torch's -------------------------
SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
_e("silu", "a", "a / (1 + exp(-a))", {"a": "g * sigmoid(a) * (1 + a * (1 - sigmoid(a)))"}, "SiluBackward0",
   refuses=_no_integers("silu_cpu"), internal=True)
_softplus1 = "tanh(log1p(exp(a)))"
_e("mish", "a", f"a * {_softplus1}", {"a": f"g * ({_softplus1} + a * sigmoid(a) * (1 - {_softplus1} * {_softplus1}))"},
   "MishBackward0", refuses=_no_integers("mish_cpu"), internal=True)
# hardsigmoid, hardswish: the gradient is 0 at -3 and, for hardsigmoid, at 3 (torch's open intervals); torch's
# hardsigmoid gradient multiplies by 1/6 rounded to float32, in float64 too
_e("hardsigmoid", "a", "minimum(maximum(a + 3, 0), 6) / 6",
   {"a": "where((a > -3) & (a < 3), g * 0.1666666716337204, 0)"},
   "HardsigmoidBackward0", refuses=_no_integers("hardsigmoid_cpu"), internal=True, backward_aten="hardsigmoid_backward")
_e("hardswish", "a", "a * minimum(maximum(a + 3, 0), 6) / 6",
   {"a": "where(a <= -3, 0, where(a < 3, g * (a / 3 + 0.5), g))"}, "HardswishBackward0",
   refuses=_no_integers("hardswish_cpu"), internal=True)
# hardtanh (and relu6): no gradient at either bound, unlike clamp
_e("hardtanh", "a lo hi", "minimum(maximum(a, lo), hi)", {"a": "where((a <= lo) | (a >= hi), 0, g)"},
   "HardtanhBackward0", saved_names={"lo": "min_val", "hi": "max_val"}, scalar_only=("lo", "hi"),
   refuses={"bool": (RuntimeError, "Bool inputs not supported for hardtanh")}, options=("lo", "hi"), internal=True)
# leaky_relu: the slope below 0 and at 0 (torch's `a > 0`); the in-place form's node reads the result
_e("leaky_relu", "a slope", "where(a > 0, a, a * slope)", {"a": "where(a > 0, g, g * slope)"}, "LeakyReluBackward0",
   saved_names={"slope": "negative_slope"}, scalar_only=("slope",), options=("slope",),
   refuses=_no_integers("leaky_relu_cpu"), internal=True)
_e("leaky_relu_result", "a slope", "where(a > 0, a, a * slope)", {"a": "where(out > 0, g, g * slope)"},
   "LeakyReluBackward1", saved_names={"slope": "negative_slope"}, scalar_only=("slope",), options=("slope",),
   refuses=_no_integers("leaky_relu_cpu"), internal=True)
# elu, selu, celu: torch's elu(alpha, scale, input_scale); the in-place forms' nodes read the result instead
# (the gradient at 0 is a constant branch: torch's second derivative there is 0)
_e("elu", "a alpha", "where(a <= 0, expm1(a) * alpha, a)",
   {"a": "where(a < 0, g * alpha * exp(a), where(a == 0, g * alpha, g))"},
   "EluBackward0", refuses=_no_integers("elu_cpu"), scalar_only=("alpha",), options=("alpha",), internal=True)
_e("elu_result", "a alpha", "where(a <= 0, expm1(a) * alpha, a)",
   {"a": "where(out < 0, g * (out + alpha), where(out == 0, g * alpha, g))"},
   "EluBackward1", refuses=_no_integers("elu_cpu"), scalar_only=("alpha",), options=("alpha",), internal=True)
_e("selu", "a", f"where(a <= 0, expm1(a) * {SELU_ALPHA * SELU_SCALE}, a * {SELU_SCALE})",
   {"a": f"where(a < 0, g * {SELU_ALPHA * SELU_SCALE} * exp(a), where(a == 0, g * {SELU_ALPHA * SELU_SCALE}, "
         f"g * {SELU_SCALE}))"}, "EluBackward0",
   refuses=_no_integers("elu_cpu"), internal=True)
_e("selu_result", "a", f"where(a <= 0, expm1(a) * {SELU_ALPHA * SELU_SCALE}, a * {SELU_SCALE})",
   {"a": f"where(out < 0, g * (out + {SELU_ALPHA * SELU_SCALE}), where(out == 0, g * {SELU_ALPHA * SELU_SCALE}, "
         f"g * {SELU_SCALE}))"}, "EluBackward1",
   refuses=_no_integers("elu_cpu"), internal=True)
_e("celu", "a alpha", "where(a <= 0, expm1(a * (1 / alpha)) * alpha, a)",
   {"a": "where(a < 0, g * exp(a * (1 / alpha)), g)"}, "CeluBackward0", refuses=_no_integers("elu_cpu"),
   scalar_only=("alpha",), options=("alpha",), internal=True)
_e("celu_result", "a alpha", "where(a <= 0, expm1(a * (1 / alpha)) * alpha, a)",
   {"a": "where(out < 0, g * (1 / alpha) * (out + alpha), g)"}, "CeluBackward1", refuses=_no_integers("elu_cpu"),
   scalar_only=("alpha",), options=("alpha",), internal=True)
# log(sigmoid(a)) without overflow, as torch's CPU kernel: min(a, 0) - log1p(exp(-|a|))
_e("logsigmoid", "a", "minimum(a, 0) - log1p(exp(-abs(a)))",
   {"a": "g * sigmoid(-a)"},
   "LogSigmoidBackward0", refuses=_no_integers("log_sigmoid_cpu"), internal=True)
# above the threshold (on a * beta) softplus is the identity
_e("softplus", "a beta threshold", "where(a * beta > threshold, a, log1p(exp(a * beta)) / beta)",
   {"a": "where(a * beta > threshold, g, g * sigmoid(a * beta))"}, "SoftplusBackward0",
   scalar_only=("beta", "threshold"), refuses=_no_integers("softplus_cpu"), options=("beta", "threshold"),
   internal=True)
# the shrinks: no gradient on [-lambd, lambd], its ends included; a * 0 keeps NaN
_e("softshrink", "a lambd", "where(a > lambd, a - lambd, where(a < -lambd, a + lambd, a * 0))",
   {"a": "where((a >= -lambd) & (a <= lambd), 0, g)"}, "SoftshrinkBackward0", scalar_only=("lambd",),
   refuses=_no_integers("softshrink_check"), options=("lambd",), internal=True)
_e("hardshrink", "a lambd", "where((a >= -lambd) & (a <= lambd), 0, a)",
   {"a": "where((a >= -lambd) & (a <= lambd), 0, g)"}, "HardshrinkBackward0", scalar_only=("lambd",),
   refuses=_no_integers("hardshrink_cpu"), options=("lambd",), internal=True)

# threshold: the value where a <= threshold (NaN passes), the gradient only where a > threshold; the in-place
# form's node is torch's ThresholdBackward1 (reading the input as it was)
_THRESHOLD_BOOL = {"bool": (NotImplementedError, '"threshold_cpu" not implemented for \'Bool\'')}
_e("threshold", "a th v", "where(a <= th, v, a)", {"a": "where(a <= th, 0, g)"}, "ThresholdBackward0",
   saved_names={"th": "threshold"}, scalar_only=("th", "v"), options=("th", "v"), refuses=_THRESHOLD_BOOL,
   internal=True)
_e("threshold_in_place", "a th v", "where(a <= th, v, a)", {"a": "where(a <= th, 0, g)"}, "ThresholdBackward1",
   saved_names={"th": "threshold"}, scalar_only=("th", "v"), options=("th", "v"), refuses=_THRESHOLD_BOOL,
   internal=True, aten="threshold")

# ---- pointwise math ----------------------------------------------------------------------------------
# copysign: |a| with b's sign; the gradient is out / a (0 at a == 0), none for b
_copysign_a = "g * where(a == 0, 0, out / a)"  # (torch masks the ratio, then multiplies: its 2nd order is so)
_e("copysign", "a b", "copysign(a, b)", {"a": _copysign_a, "b": "zeros"},
   "CopysignBackward0", kind="float", internal=True)
_e("copysign_scalar", "a b", "copysign(a, b)", {"a": _copysign_a}, "CopysignBackward1",
   kind="float", scalar_only=("b",), internal=True)
# equal infinities give themselves (inf - inf would be NaN)
# torch's derivatives subtract the inputs (other - self), which a bool input (a float partner promotes it
# forward) refuses
_SUB_OF_A_BOOL = {"a": {"bool": (RuntimeError, SUB_BOOL)}, "b": {"bool": (RuntimeError, SUB_BOOL)}}
_e("logaddexp", "a b", "where(a == b, a + 0.6931471805599453, maximum(a, b) + log1p(exp(-abs(a - b))))",
   {"a": "g / (1 + exp(b - a))", "b": "g / (1 + exp(a - b))"}, "LogaddexpBackward0",
   refuses=_no_integers("logaddexp_cpu"), internal=True, backward_refuses=_SUB_OF_A_BOOL)
_e("logaddexp2", "a b",
   "where(a == b, a + 1, maximum(a, b) + log1p(exp(-abs(a - b) * 0.6931471805599453)) * 1.4426950408889634)",
   {"a": "g / (1 + power(2, b - a))", "b": "g / (1 + power(2, a - b))"}, "Logaddexp2Backward0",
   refuses=_no_integers("logaddexp2_cpu"), internal=True, backward_refuses=_SUB_OF_A_BOOL)
_e("hypot", "a b", "hypot(a, b)", {"a": "g * (a / out)", "b": "g * (b / out)"}, "HypotBackward0",
   refuses=_no_integers("hypot_cpu"), internal=True)
# xlogy: 0 where a == 0 (unless b is NaN); a's derivative is torch's xlogy(g, b) (0 where g is 0, unless b is
# NaN), made 0 where a == 0 and b <= 0; with a number b, where a == 0 and b is not positive (NaN too)
_xlogy_g = "where(b != b, g * b, where(g == 0, 0, g * log(b)))"  # (g * b: a number b stays in g's dtype)
_e("xlogy", "a b", "where(b != b, b, where(a == 0, 0, a * log(b)))",
   {"a": f"where((a == 0) & (b <= 0), 0, {_xlogy_g})", "b": "g * a / b"},
   "XlogyBackward0", kind="float", domain={"b": POSITIVE}, internal=True)
_e("xlogy_scalar_other", "a b", "where(b != b, b, where(a == 0, 0, a * log(b)))",
   {"a": f"where((a == 0) & ((b <= 0) | (b != b)), 0, {_xlogy_g})"},
   "XlogyBackward2", kind="float", scalar_only=("b",), internal=True)
_e("xlogy_scalar_self", "a b", "where(a != a, a, where(b == 0, 0, b * log(a)))", {"a": "g * b / a"},
   "XlogyBackward1", kind="float", scalar_only=("b",), domain={"a": POSITIVE}, internal=True)
# lerp as torch computes it: from the nearer end, so that weight 1 gives `end` exactly
_lerp = "where(abs(w) < 0.5, a + w * (b - a), b - (b - a) * (1 - w))"
_e("lerp", "a b w", _lerp, {"a": "g * (1 - w)", "b": "g * w"}, "LerpBackward0", scalar_only=("w",),
   saved_names={"w": "weight"}, refuses=_no_integers("lerp_kernel_scalar"), options=("w",), internal=True)
# a bool weight: torch's `1 - weight` for start's gradient subtracts two bool tensors, which it refuses
_e("lerp_tensor", "a b w", _lerp, {"a": "g * (1 - w)", "b": "g * w", "w": "g * (b - a)"}, "LerpBackward1",
   saved_names={"b": "end", "w": "weight"}, refuses=_no_integers("lerp_kernel_tensor"), internal=True,
   backward_refuses={"w": {"bool": (RuntimeError, "Subtraction, the `-` operator, with two bool tensors is not "
                                                  "supported. Use the `^` or `logical_xor()` operator instead.")}},
   refusal_blocks=("a",))
# frac = a - trunc(a), as torch (-0.0 and integers give +0.0)
_e("frac", "a", "a - trunc_div(a, 1)", {"a": "g"}, "FracBackward0", refuses=_no_integers("frac_cpu"))
_e("sinc", "a", "where(a == 0, 1, sin(a * 3.141592653589793) / (a * 3.141592653589793))",
   # (torch masks where a * a * pi underflows to 0, not only at 0)
   {"a": "where(a * a * 3.141592653589793 == 0, 0, g * (a * 3.141592653589793 * cos(a * 3.141592653589793) - "
         "sin(a * 3.141592653589793)) / (a * a * 3.141592653589793))"}, "SincBackward0", kind="float")
# logit: outside [0, 1] the gradient is NaN (nan_of: a constant, no derivative); with eps the input is
# clamped and the gradient 0 outside
_e("logit", "a", "log(a / (1 - a))", {"a": "where((a < 0) | (a > 1), nan_of(a), g / (a * (1 - a)))"},
   "LogitBackward0", kind="float", domain={"a": PROBABILITY}, internal=True)
_e("logit_eps", "a eps", "log(minimum(maximum(a, eps), 1 - eps) / (1 - minimum(maximum(a, eps), 1 - eps)))",
   {"a": "where((a < eps) | (a > 1 - eps), 0, g / (a * (1 - a)))"}, "LogitBackward0", kind="float",
   scalar_only=("eps",), domain={"a": PROBABILITY}, options=("eps",), internal=True)
_e("erfinv", "a", "erfinv(a)", {"a": "g * 0.886226925452758 * exp(erfinv(a) * erfinv(a))"}, "ErfinvBackward0",
   kind="float", domain={"a": UNIT})
# NaN, +inf and -inf replaced (a - a is 0 exactly where a is finite); the gradient flows where a is finite
_e("nan_to_num", "a v p m", "where(a != a, v, where(a - a == 0, a, where(a > 0, p, m)))",
   {"a": "where(a - a == 0, g, 0)"}, "NanToNumBackward0", scalar_only=("v", "p", "m"), options=("v", "p", "m"),
   internal=True)

# addcmul / addcdiv: a + v * b * c and a + v * b / c in torch's order of rounding; `v` is an option
_e("addcmul", "a b c v", "a + v * b * c", {"a": "g", "b": "g * (c * v)", "c": "g * (b * v)"}, "AddcmulBackward0",
   saved_names={"b": "tensor1", "c": "tensor2", "v": "value"}, scalar_only=("v",), options=("v",),
   refuses={"bool": (NotImplementedError, '"addcmul_cpu_out" not implemented for \'Bool\'')}, internal=True,
   integer_arithmetic=("b", "c"))
# tensor1's gradient is (value / tensor2) in torch's formula, a float of the default dtype written into tensor2's
# dtype: refused when that is an integer or bool
_INTEGER_DIVISOR = {name: (RuntimeError, f"result type {{default}} can't be cast to the desired output type {word}")
                    for name, word in (("int64", "Long"), ("int32", "Int"), ("int16", "Short"), ("int8", "Char"),
                                       ("uint8", "Byte"), ("bool", "Bool"))}
_e("addcdiv", "a b c v", "a + v * b / c", {"a": "g", "b": "g * (v / c)", "c": "-g * (v * b / (c * c))"},
   "AddcdivBackward0", saved_names={"b": "tensor1", "c": "tensor2", "v": "value"}, scalar_only=("v",),
   options=("v",), domain={"c": NONZERO}, internal=True, backward_refuses={"c": _INTEGER_DIVISOR},
   refusal_blocks=("b",), integer_arithmetic=("b", "c"))


@dataclass(frozen=True)
class Reduction:
    """A fold over one axis: `update` statements fold `x_i` at position `k` into ACC (and BEST, the
    winning position, for selecting reductions); `combine` folds per-thread partials."""
    name: str
    update: tuple
    combine: str = ""  # numpy ufunc folding partial results
    identity: str = ""  # the value a fold starts from (kernel code, cast to the accumulator dtype)
    selects: bool = False  # the result is one of the inputs (max/min): it has an index


REDUCTIONS = {
    "sum": Reduction("sum", ("ACC = ACC + x_i",), "add", "0"),
    "prod": Reduction("prod", ("ACC = ACC * x_i",), "multiply", "1"),
    # NaN wins as soon as it is seen and stays, as in torch
    "max": Reduction("max", ("if x_i > ACC or (x_i != x_i and ACC == ACC):", "    ACC = x_i", "    BEST = k"),
                     "maximum", "-np.inf", True),
    "min": Reduction("min", ("if x_i < ACC or (x_i != x_i and ACC == ACC):", "    ACC = x_i", "    BEST = k"),
                     "minimum", "np.inf", True),
}
