"""The layer classes of numgrad.nn, one small file per family."""
from .activation import GELU, LogSoftmax, ReLU, Sigmoid, Softmax, Tanh
from .container import ModuleDict, ModuleList, Sequential
from .conv import Conv2d, MaxPool2d
from .dropout import Dropout
from .linear import Embedding, Flatten, Identity, Linear
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss
from .pointwise_activation import CELU, ELU, GLU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, LogSigmoid, \
    Mish, PReLU, ReLU6, RReLU, SELU, SiLU, Softplus, Softshrink, Softsign, Tanhshrink
from .normalization import BatchNorm1d, BatchNorm2d, LayerNorm
