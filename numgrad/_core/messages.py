"""torch's wording for errors and warnings that several layers raise, so users' searches find answers."""
import re


def op_name(node):
    """A node as torch's messages name it: "Backward" and a 0 after it dropped (MulBackward0 is Mul, PowBackward1
    is Pow1); "" for no node."""
    return re.sub(r"Backward(?:0$|(?=\d+$))", "", node.name()) if node is not None else ""


NON_LEAF_GRAD = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't "
    "be populated during autograd.backward(). If you indeed want the .grad field to be populated for a "
    "non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by "
    "mistake, make sure you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for "
    "more information. (Triggered internally at /__w/pytorch/pytorch/build/aten/src/ATen/core/TensorBody.h:493.)")
NON_LEAF_REQUIRES_GRAD = (
    "you can only change requires_grad flags of leaf variables. If you want to use a computed variable in a "
    "subgraph that doesn't require differentiation use var_no_grad = var.detach().")
LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF_INPLACE = "a view of a leaf Variable that requires grad is being used in an in-place operation."
INFERENCE_INPLACE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a "
    "normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more details.")
INTERNAL_OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers to a single memory "
                    "location. Please clone() the tensor before performing the operation.")
PARTIAL_OVERLAP = ("unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
                   "single memory location. Please clone() the tensor before performing the operation.")
DETACH_VIEW_INPLACE = (
    "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel (DDP) for training, "
    "and gradient_as_bucket_view is set as True, gradients are views of DDP buckets, and hence detach_() cannot be "
    "called on these gradients. To fix this error, please refer to the Optimizer.zero_grad() function in "
    "torch/optim/optimizer.py as the solution.")
# torch's engine casts each gradient to the dtype of the tensor it flows into, then asserts that dtype is
# differentiable: an integer or bool tensor that an in-place op made require grad fails there
NON_DIFFERENTIABLE_GRAD = (
    'isDifferentiableType(grad.scalar_type()) INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/torch/csrc/autograd/'
    'engine.cpp":998, please report a bug to PyTorch. ')

# torch's handle_view_on_rebase for a view made in no_grad mode (CreationMeta::NO_GRAD_MODE, which views of it
# inherit): written in place, or read after its base was, with grad mode enabled
NO_GRAD_VIEW_REASON = (
    "Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both "
    "the view and the inplace either both inside the no_grad block (if you don't want the inplace to be tracked) or "
    "both outside (if you want the inplace to be tracked).")
NO_GRAD_VIEW_REBASED = ("A view was created in no_grad mode and its base or another view of its base has been "
                        "modified inplace with grad mode enabled. " + NO_GRAD_VIEW_REASON)

# torch's handle_view_on_rebase for an unbind/split output made where its base did not require grad
MULTI_OUTPUT_VIEW_NO_GRAD = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled. This view is the output "
    "of a function that returns multiple views. Such functions do not allow the output views to be modified inplace. "
    "You should replace the inplace operation by an out-of-place one.")


def multi_output_view_written(output_nr, op):
    """torch's handle_view_on_rebase for an in-place write of an unbind/split output (or a view of one) that
    requires grad: `op` names the view's grad_fn as the error shows it (Split, Unbind, AsStrided, ...)."""
    return (f"Output {output_nr} of {op} is a view and is being modified inplace. This view is the output of a "
            "function that returns multiple views. Such functions do not allow the output views to be modified "
            "inplace. You should replace the inplace operation by an out-of-place one.")
