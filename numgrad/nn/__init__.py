"""numgrad.nn: Parameter, Module, layers, losses, functional and init, with torch's names."""
from . import functional, init, parallel, utils
from .module import Module
from .modules import *  # noqa: F401,F403
from .modules import BCELoss, BCEWithLogitsLoss, BatchNorm1d, BatchNorm2d, Conv2d, CrossEntropyLoss, Dropout, \
    Embedding, Flatten, GELU, Identity, L1Loss, LayerNorm, Linear, LogSoftmax, MSELoss, MaxPool2d, ModuleDict, \
    ModuleList, NLLLoss, ReLU, Sequential, Sigmoid, Softmax, Tanh
from .parameter import Parameter
