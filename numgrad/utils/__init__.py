"""torch.utils's counterpart: utils.dlpack (the DLPack exchange)."""
