"""Embedders: the registry that picks one by name (`registry`), the built-in ones (`hashed`:
hashed n-grams and the TF-IDF fallback, `static`: word vectors from a local file, `http`: an
OpenAI-compatible endpoint) and the choice with its announced fallback (`builtin`).

What an embedder is, the protocol a package implements, lives in `hologram.sdk.embedding`.
"""
