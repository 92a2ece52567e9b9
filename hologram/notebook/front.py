"""The widgets' front end: ES modules and a style sheet shipped inside the package
(`hologram/notebook/js`), nothing fetched at run time.

Each widget is an anywidget whose module is a bundle of those files. The service page
imports the same files as real ES modules (served under /static/widgets), so one file can
hold code both front ends use: the bundle drops the files' local imports (`import … from
"./x.js";`), which the bundle's order satisfies instead.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path
from typing import Any

LOCAL_IMPORT = re.compile(r'^import \{[\w\s,]+\} from "\./[\w-]+\.js";$')


def js_dir() -> Path:
    return Path(str(resources.files("hologram.notebook") / "js"))


def bundle(*names: str) -> str:
    """The files `names` (in dependency order) as one module. Any import other than a
    one-line local one is refused: the bundle could not satisfy it."""
    parts = []
    for name in names:
        text = (js_dir() / f"{name}.js").read_text(encoding="utf-8")
        lines = []
        for number, line in enumerate(text.splitlines(), 1):
            if LOCAL_IMPORT.match(line):
                continue
            if line.startswith("import "):
                raise ValueError(
                    f"{name}.js:{number}: only one-line local imports can be bundled: {line}"
                )
            lines.append(line)
        parts.append(f"// ---- {name}.js\n" + "\n".join(lines))
    return "\n".join(parts)


def style() -> str:
    return (js_dir() / "widgets.css").read_text(encoding="utf-8")


class StaticFallback:
    """Mixed into a widget: `fallback_html()` goes beside the widget view in its display
    data, for a viewer without widget support (nbconvert without widget state, GitHub's
    renderer). Front ends that show widgets prefer the widget view."""

    def fallback_html(self) -> str:
        raise NotImplementedError

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        # A mixin: the widget class it is mixed into, after it in the MRO, defines this; mypy
        # checks the mixin against `object` alone.
        shown = super()._repr_mimebundle_(**kwargs)  # type: ignore[misc]
        data = shown[0] if isinstance(shown, tuple) else shown
        if isinstance(data, dict):
            data["text/html"] = self.fallback_html()
        return shown
