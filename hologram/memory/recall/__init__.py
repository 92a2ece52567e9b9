"""The search machinery every store shares: in-memory vector and BM25 indexes (`index`),
stemmed episodic words (`episodic`), time expressions resolved to periods (`timex`), and the
one hybrid index over the window, the cold context and the graph's text blocks (`hybrid`).
It knows no store: the stores above it tag their documents with a `Place`.
"""
