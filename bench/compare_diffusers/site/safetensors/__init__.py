"""A pure-Python stand-in for the safetensors package (see torch.py)."""

from .torch import load_file


class safe_open:  # noqa: N801 (the real package's name)
    """The real safe_open's reading interface (framework "pt" only)."""

    def __init__(self, path, framework="pt", device="cpu"):
        del framework
        self._tensors = load_file(path, device)

    def __enter__(self):
        return self

    def __exit__(self, *_):
        return False

    def keys(self):
        return list(self._tensors)

    def get_tensor(self, name):
        return self._tensors[name]

    def metadata(self):
        return None
