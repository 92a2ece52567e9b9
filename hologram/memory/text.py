"""Text as memory sees it: normalised whitespace, and words from jieba.

jieba's dictionary takes about half a second to load, so it is loaded on first use or by
`Segmenter.warm_up` in a background thread, never on the boot path or on the event loop.

A text is segmented once: the kernel shares one `Segmenter` between the embedder and every
index that keeps words (the window, the cold context, the graph's blocks and its indexer),
and the segmenter remembers the words of the texts it cut last. A recall's query, cut for
its keywords and for its vector, and a turn, cut when it enters the window and again when
it is archived, each cost one jieba call per distinct string.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
import unicodedata

_SPACE = re.compile(r"\s+")

_STOPWORDS_TEXT = """
    a an the and or but of to in on at for with by from as is are was were be been being
    it its this that these those i you he she we they me him her us them my your his our their
    do does did have has had not no so if then than too very can will just what which who
    whom how when where why am s t 's
    的 了 是 在 和 也 就 都 而 及 与 着 或 一个 没有 我们 你们 他们 她们 它们 这 那 这个 那个
    吗 呢 吧 啊 呀 哦 嗯 之 其 于 以 被 把 给 让 向 从 对 又 还 很 我 你 他 她 它 有 要 会
    """
STOPWORDS = frozenset(_STOPWORDS_TEXT.split())
"""Words too common to say what a text is about: down-weighted in vectors, left out of
keyword recall."""


def clean_text(text: str) -> str:
    """The spec's CleanText: whitespace runs become one space, ends trimmed."""
    return _SPACE.sub(" ", text).strip()


def is_word(token: str) -> bool:
    """True for a token with at least one letter or digit (drops spaces and punctuation)."""
    return any(unicodedata.category(ch)[0] in "LN" for ch in token)


class Segmenter:
    """Words of a Chinese or English text, through jieba, loaded lazily and thread-safely.

    jieba keeps its dictionary in its own module; this object only decides when that load
    happens. Every method may block on the first load: call them off the event loop."""

    CACHE_TEXTS = 2048
    """Texts whose words are remembered: well beyond what one turn cuts (its input, the
    reply, the window's pruned events, the query) at a few hundred kilobytes."""

    def __init__(self, cache_texts: int = CACHE_TEXTS) -> None:
        self._lock = threading.Lock()
        self._cut: object | None = None
        self.load_seconds: float | None = None
        self.cuts = 0
        """jieba calls made (texts not found among those remembered)."""
        # Per instance (no process-wide state); lru_cache is safe to call from threads.
        self._words_of = functools.lru_cache(maxsize=cache_texts)(self._segment)

    @property
    def loaded(self) -> bool:
        return self._cut is not None

    def _load(self) -> None:
        with self._lock:
            if self._cut is not None:
                return
            import time

            started = time.perf_counter()
            import jieba

            # jieba prints its progress to stderr on first load unless told not to.
            jieba.setLogLevel(logging.WARNING)
            jieba.initialize()
            self._cut = jieba.lcut
            self.load_seconds = time.perf_counter() - started

    def warm_up(self) -> threading.Thread:
        """Start loading jieba in a daemon thread; returns the thread."""
        thread = threading.Thread(target=self._load, name="jieba-warm-up", daemon=True)
        thread.start()
        return thread

    def words(self, text: str) -> list[str]:
        """Lower-cased words, punctuation and spaces dropped."""
        return list(self._words_of(text))

    def _segment(self, text: str) -> tuple[str, ...]:
        if self._cut is None:
            self._load()
        cut = self._cut
        assert callable(cut)
        self.cuts += 1
        return tuple(token.lower() for token in cut(text) if is_word(token))

    def keywords(self, text: str) -> list[str]:
        """Words that say what a text is about: `words` without stopwords."""
        return [word for word in self.words(text) if word not in STOPWORDS]
