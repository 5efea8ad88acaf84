"""numgrad.compile(module): the module with its call compiled (torch's OptimizedModule); attributes,
parameters and state_dict are the original module's."""


class OptimizedModule:
    def __init__(self, module, compiled_call):
        object.__setattr__(self, "_orig_mod", module)
        object.__setattr__(self, "_compiled", compiled_call)

    def __call__(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._orig_mod, name)

    def __setattr__(self, name, value):
        setattr(self._orig_mod, name, value)

    def __repr__(self):
        return f"OptimizedModule(\n  (_orig_mod): {self._orig_mod!r}\n)"
