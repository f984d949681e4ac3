"""Names only: diffusers' textual-inversion loader imports Tokenizer at module
level; the benchmark never tokenizes."""


class Tokenizer:
    def __init__(self, *args, **kwargs):
        raise RuntimeError("tokenizers is a placeholder here")
