"""torch.utils's counterpart: utils.data (datasets and the DataLoader) and utils.dlpack (the DLPack exchange)."""
from . import data, dlpack
