"""numgrad.testing's public names are its __all__: every function and class it defines, and none of the modules it
imports (np, collections, dataclasses) that dir() shows."""
import inspect

import numgrad.testing


def test_all_lists_what_testing_defines_and_nothing_it_imports():
    defined = {name for name, value in vars(numgrad.testing).items()
               if not name.startswith("_") and (inspect.isfunction(value) or inspect.isclass(value))
               and value.__module__.startswith("numgrad.testing")}
    assert set(numgrad.testing.__all__) == defined
    namespace = {}
    exec("from numgrad.testing import *", namespace)
    assert not {"np", "collections", "dataclasses", "numbers", "re", "traceback", "numgrad"} & set(namespace)
