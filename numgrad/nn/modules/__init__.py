"""The layer classes of numgrad.nn, one small file per family."""
from .activation import GELU, LogSoftmax, ReLU, Sigmoid, Softmax, Softmax2d, Softmin, Tanh
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d, MaxPool2d
from .dropout import AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout
from .distance import CosineSimilarity, PairwiseDistance
from .linear import Bilinear, Embedding, Flatten, Identity, Linear
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss, NLLLoss2d
from .loss_extra import CosineEmbeddingLoss, CTCLoss, GaussianNLLLoss, HuberLoss, KLDivLoss, MarginRankingLoss, \
    MultiMarginLoss, PoissonNLLLoss, SmoothL1Loss, TripletMarginLoss
from .loss_margin import HingeEmbeddingLoss, MultiLabelMarginLoss, MultiLabelSoftMarginLoss, SoftMarginLoss, \
    TripletMarginWithDistanceLoss
from .pointwise_activation import CELU, ELU, GLU, Hardshrink, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU, \
    LogSigmoid, Mish, PReLU, ReLU6, RReLU, SELU, SiLU, Softplus, Softshrink, Softsign, Tanhshrink, Threshold
from .normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d, LayerNorm, LocalResponseNorm, RMSNorm
from .padding import CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d, ConstantPad2d, ConstantPad3d, \
    ReflectionPad1d, ReflectionPad2d, ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d, \
    ZeroPad1d, ZeroPad2d, ZeroPad3d
from .pooling import AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AdaptiveMaxPool1d, AdaptiveMaxPool2d, \
    AdaptiveMaxPool3d, AvgPool1d, AvgPool2d, AvgPool3d, LPPool1d, LPPool2d, LPPool3d, MaxPool1d, MaxPool3d, \
    MaxUnpool1d, MaxUnpool2d, MaxUnpool3d
from .upsampling import ChannelShuffle, Fold, PixelShuffle, PixelUnshuffle, Unfold, Upsample, UpsamplingBilinear2d, \
    UpsamplingNearest2d
from .attention import MultiheadAttention
from .transformer import TransformerEncoder, TransformerEncoderLayer
from .transformer_decoder import Transformer, TransformerDecoder, TransformerDecoderLayer
from .flatten import Unflatten
from .instancenorm import GroupNorm, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .rnn import GRU, GRUCell, LSTM, LSTMCell, RNN, RNNBase, RNNCell, RNNCellBase
from .embedding_bag import EmbeddingBag
