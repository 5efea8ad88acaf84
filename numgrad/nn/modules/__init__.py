"""The layer classes of numgrad.nn, one small file per family."""
from .activation import GELU, LogSoftmax, ReLU, Sigmoid, Softmax, Tanh
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import Conv2d, MaxPool2d
from .dropout import Dropout
from .linear import Embedding, Flatten, Identity, Linear
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss
from .normalization import BatchNorm1d, BatchNorm2d, LayerNorm
from .attention import MultiheadAttention
from .transformer import TransformerEncoder, TransformerEncoderLayer
from .flatten import Unflatten
from .instancenorm import GroupNorm, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .rnn import GRU, GRUCell, LSTM, LSTMCell, RNN, RNNBase, RNNCell, RNNCellBase
from .embedding_bag import EmbeddingBag
