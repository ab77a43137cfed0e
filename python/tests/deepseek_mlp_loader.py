"""Imports python/examples/deepseek_mlp.py (not a package) for the tests."""

import importlib.util
import os

from conftest import REPO


def load_example():
    path = os.path.join(REPO, "python", "examples", "deepseek_mlp.py")
    spec = importlib.util.spec_from_file_location("deepseek_mlp", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
