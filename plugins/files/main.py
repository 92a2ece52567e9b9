"""The files plugin: text files under one root, nothing else. The root is the setting
`plugin.files.root`, else $HOLOGRAM_FILES_ROOT, else `files/` in the plugin's data folder.

Every path is resolved (symbolic links included) and must stay under the root; a path that
leaves it is refused with an error the model can read.
"""

import os
from pathlib import Path

from hologram.plugins.runtime import PluginApp

app = PluginApp()
MAX_READ = 256 * 1024
state: dict[str, Path | None] = {"root": None}


@app.on_start
def choose_root(sdk):
    configured = app.settings.get("root") or os.environ.get("HOLOGRAM_FILES_ROOT")
    root = Path(configured or Path(app.data_dir) / "files")
    root.mkdir(parents=True, exist_ok=True)
    state["root"] = root.resolve()


def inside(path: str) -> Path:
    root = state["root"]
    if root is None:  # chosen by `choose_root` before any tool call can arrive
        raise RuntimeError("the files root is not chosen yet: the plugin has not started")
    target = (root / path).resolve()
    if target != root and root not in target.parents:
        raise PermissionError(f"{path!r} is outside the files root; use a path inside it")
    return target


PATH = {"type": "string", "description": "a path relative to the files root"}


@app.tool(
    "Read a text file under the files root.",
    {
        "type": "object",
        "properties": {"path": PATH},
        "required": ["path"],
    },
)
def files_read(args):
    target = inside(args["path"])
    if not target.is_file():
        raise FileNotFoundError(f"no file {args['path']!r}")
    data = target.read_bytes()[:MAX_READ]
    return data.decode("utf-8", "replace")


@app.tool(
    "Write a text file under the files root (parents are created).",
    {
        "type": "object",
        "properties": {"path": PATH, "content": {"type": "string"}},
        "required": ["path", "content"],
    },
    touches_files=True,
)
def files_write(args):
    target = inside(args["path"])
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(args["content"], encoding="utf-8")
    return f"wrote {len(args['content'])} characters to {args['path']}"


@app.tool(
    "List the files under a folder of the files root.",
    {
        "type": "object",
        "properties": {"path": {**PATH, "default": "."}},
    },
)
def files_list(args):
    folder = inside(args.get("path", "."))
    root = state["root"]
    return "\n".join(sorted(str(p.relative_to(root)) for p in folder.rglob("*") if p.is_file()))


app.run()
