"""`.hmap` packages: a zip with `plugin.json` and its entry (spec 000: external plugin
distribution).

Everything is checked before anything is written where plugins live: the archive's size,
every member's path (absolute paths, `..`, links: the zip-slip family), the unpacked size
(a zip bomb), the manifest (read under the limits of `hologram.sdk.jsontext`, so nesting or
a number Python's reader would choke on is refused too), the entry's presence, and the rule
that a plugin which does not start by itself (`auto_start: false`) must ship a SKILL.md
saying how to use it. The
archive is unpacked into a staging folder beside the plugins folder and moved into place in
one rename, so a refused or failed install leaves the plugins folder as it was.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import stat
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from hologram.plugins.manifest import MANIFEST, Kind, Manifest, ManifestError, parse_manifest
from hologram.plugins.skill import SKILL_FILE
from hologram.sdk import jsontext

DEFAULT_MAX_PACKAGE = 20 * 1024 * 1024
DEFAULT_MAX_UNPACKED = 100 * 1024 * 1024
MAX_MEMBERS = 2000


class PackageError(ValueError):
    """A package refused; the message says why. Nothing was installed."""


@dataclass(frozen=True, slots=True)
class Package:
    manifest: Manifest
    data: bytes
    members: dict[str, str]
    """Path inside the archive -> path inside the plugin's folder."""


def read_package(
    source: bytes | str | os.PathLike[str],
    *,
    max_bytes: int = DEFAULT_MAX_PACKAGE,
    max_unpacked: int = DEFAULT_MAX_UNPACKED,
) -> Package:
    """Check a package without writing anything."""
    if isinstance(source, bytes):
        data = source
    else:
        path = Path(source)
        size = path.stat().st_size
        if size > max_bytes:
            raise PackageError(f"{path.name}: {size} bytes is over the limit of {max_bytes}")
        data = path.read_bytes()
    if len(data) > max_bytes:
        raise PackageError(f"the package is {len(data)} bytes, over the limit of {max_bytes}")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as exc:
        raise PackageError(f"not a .hmap package (a zip archive): {exc}") from None
    with archive:
        infos = archive.infolist()
        if len(infos) > MAX_MEMBERS:
            raise PackageError(f"{len(infos)} files in the package; at most {MAX_MEMBERS}")
        names = [_safe_name(info) for info in infos]
        total = sum(info.file_size for info in infos)
        if total > max_unpacked:
            raise PackageError(f"unpacks to {total} bytes, over the limit of {max_unpacked}")
        root = _root(names)
        members = {
            info.filename: name[len(root) :]
            for info, name in zip(infos, names, strict=True)
            if not info.is_dir() and name[len(root) :]
        }
        inside = set(members.values())
        if MANIFEST not in inside:
            raise PackageError(f"the package has no {MANIFEST} at its top")
        raw = archive.read(root + MANIFEST)
    try:
        manifest = parse_manifest(jsontext.loads(raw), f"package {MANIFEST}")
    except jsontext.JsonRefused as exc:
        raise PackageError(f"package {MANIFEST} {exc.where or 'text'} {exc.reason}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise PackageError(f"package {MANIFEST} is not valid JSON ({exc})") from None
    except ManifestError as exc:
        raise PackageError(str(exc)) from None
    if manifest.entry not in inside:
        raise PackageError(
            f"the entry {manifest.entry!r} named in {MANIFEST} is not in the package"
        )
    if not manifest.auto_start and SKILL_FILE not in inside:
        raise PackageError(
            f"plugin {manifest.name!r} has auto_start false but ships no {SKILL_FILE}: nothing "
            "would tell the agent or a person how to use it; add a SKILL.md"
        )
    if manifest.kind is Kind.SKILL and SKILL_FILE not in inside:
        raise PackageError(f"a skill package needs {SKILL_FILE}")
    return Package(manifest, data, members)


def _safe_name(info: zipfile.ZipInfo) -> str:
    name = info.filename
    mode = info.external_attr >> 16
    if stat.S_ISLNK(mode):
        raise PackageError(f"{name!r} is a symbolic link; packages hold plain files only")
    path = PurePosixPath(name.replace("\\", "/"))
    if (
        "\\" in name
        or path.is_absolute()
        or ".." in path.parts
        or (path.parts and ":" in path.parts[0])
        or "\x00" in name
    ):
        raise PackageError(f"{name!r} would land outside the plugin's folder (zip slip)")
    return str(path) + ("/" if info.is_dir() else "")


def _root(names: list[str]) -> str:
    """'' when plugin.json is at the top; 'folder/' when everything sits in one folder."""
    if MANIFEST in names:
        return ""
    tops = {n.split("/", 1)[0] for n in names}
    if len(tops) == 1:
        return f"{tops.pop()}/"
    return ""


def unpack(package: Package, plugins_dir: Path, *, replace: bool = False) -> Path:
    """Write `package` to `plugins_dir/<name>` through a staging folder; returns the folder.
    Blocking: call it in a worker thread."""
    target = plugins_dir / package.manifest.name
    if target.exists() and not replace:
        raise PackageError(
            f"plugin {package.manifest.name!r} is already installed in {target}; uninstall "
            "it first or install with replace"
        )
    staging_root = plugins_dir.parent / ".plugin-staging"
    staging_root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f"{package.manifest.name}-", dir=staging_root))
    try:
        with zipfile.ZipFile(io.BytesIO(package.data)) as archive:
            for member, relative in package.members.items():
                destination = staging / relative
                destination.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(member) as src, destination.open("wb") as dst:
                    shutil.copyfileobj(src, dst)
        plugins_dir.mkdir(parents=True, exist_ok=True)
        if target.exists():
            old = staging_root / f"{package.manifest.name}.old"
            shutil.rmtree(old, ignore_errors=True)
            target.rename(old)
            staging.rename(target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            staging.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def build_package(folder: Path) -> bytes:
    """A `.hmap` of a plugin folder (for tests, notebooks and plugin authors)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                archive.write(path, path.relative_to(folder).as_posix())
    return buffer.getvalue()
