"""torch.backends.mps: numgrad has no Metal target."""


def is_available():
    return False


def is_built():
    return False
