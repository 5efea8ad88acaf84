"""torch.utils.data._utils: collate, fetch and the worker processes' side of the DataLoader."""
from . import collate, fetch, worker
from .worker import MP_STATUS_CHECK_INTERVAL
