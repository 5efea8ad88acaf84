"""numgrad.optim: SGD, Adam, AdamW, RMSprop (Numba update kernels) and learning-rate schedulers."""
from . import lr_scheduler
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD
