"""LLVM operations Numba does not spell: an addition LLVM may regroup and a float max that vectorises, so
the row kernels' reductions (softmax, layer_norm, sums along a row) run as vector loops. Generated kernels
carry this file's digest (kernels.HEADER); norm.py is compiled from its own file, whose Numba cache does not
see a change here: touch it too when this file changes."""
from llvmlite import ir
from numba.extending import intrinsic


# A row's max and sum are loop reductions that LLVM vectorises only when it may reorder them: fadd needs
# the reassoc flag, and a float max must be llvm.maxnum (see maximum for what a nan does).
# Kernels set them on these two operations only: reassoc on a whole function would also let LLVM regroup exp's
# polynomial. The order of a row's additions then depends on LLVM's vector width, never on the thread
# split, so eager and compiled steps (and any row count) agree bitwise.
# A loop that adds reorderably must not also store: LLVM vectorises such a loop behind a runtime check that
# the stored array does not overlap the ones read, a check on the arrays' distance in memory that fails for
# nearby ones, and then runs the scalar loop, whose additions go in another order. The same call gave other
# bits depending on where malloc had put its arrays (a softmax backward summing as it stored the pending
# gradient: gradcheck's two identical backward calls differed by 1 ulp, in one of three full test runs).
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
    """The larger of a and b, for a row max that may be any value when the row holds a nan (llvm.maxnum with
    the nnan flag: without it the end of each row's vector reduction checks every lane for nan, which cost
    softmax rows of 64 four times the max itself, 16 -> 4 us for 1024 rows). Softmax's row then comes out all
    nan through its exp and sum whatever the max, as torch's."""
    def codegen(context, builder, signature, args):
        t = args[0].type
        fn = builder.module.declare_intrinsic("llvm.maxnum", [t], ir.FunctionType(t, [t, t]))
        return builder.call(fn, args, fastmath=("nnan",))
    return a(a, b), codegen
