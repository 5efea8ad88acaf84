"""LLVM operations Numba does not spell: an addition LLVM may regroup and a float max that vectorises, so
the row kernels' reductions (softmax, layer_norm, sums along a row) run as vector loops. Generated kernels
carry this file's digest (kernels.HEADER); norm.py is compiled from its own file, whose Numba cache does not
see a change here: touch it too when this file changes."""
from llvmlite import ir
from numba.extending import intrinsic


# A row's max and sum are loop reductions that LLVM vectorises only when it may reorder them: fadd needs
# the reassoc flag, and a float max must be llvm.maxnum (which skips a nan: a row holding one still comes
# out all nan, through its exp and sum, as torch's).
# Kernels set them on these two operations only: reassoc on a whole function would also let LLVM regroup exp's
# polynomial. The order of a row's additions then depends on LLVM's vector width, never on the thread
# split, so eager and compiled steps (and any row count) agree bitwise.
@intrinsic
def add_reorderable(typingctx, a, b):
    """a + b, which LLVM may regroup with the other additions of a reduction (integers: a plain add, which
    LLVM regroups anyway)."""
    def codegen(context, builder, signature, args):
        if isinstance(args[0].type, ir.IntType):
            return builder.add(args[0], args[1])
        return builder.fadd(args[0], args[1], flags=("reassoc",))
    return a(a, b), codegen


@intrinsic
def maximum(typingctx, a, b):
    """The larger of a and b, the other one if either is nan (llvm.maxnum, which vectorises as a reduction)."""
    def codegen(context, builder, signature, args):
        t = args[0].type
        return builder.call(builder.module.declare_intrinsic("llvm.maxnum", [t], ir.FunctionType(t, [t, t])), args)
    return a(a, b), codegen
