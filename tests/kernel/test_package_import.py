"""`import hologram` is cheap: the kernel loads on first use of `hologram.Kernel`."""

from __future__ import annotations

import subprocess
import sys

import pytest


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys; print('\\n'.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return set(out.split())


def test_importing_the_package_does_not_import_the_kernel() -> None:
    loaded = _modules_after("import hologram")
    assert "hologram" in loaded
    assert not {"hologram.facade", "hologram.agent", "hologram.llm", "lupa", "numpy"} & loaded


def test_from_hologram_import_kernel_still_gives_the_kernel() -> None:
    loaded = _modules_after(
        "from hologram import Kernel, Phase\n"
        "from hologram.facade import Kernel as K\n"
        "assert Kernel is K and Phase.READY"
    )
    assert "hologram.facade" in loaded


def test_an_unknown_name_is_an_attribute_error() -> None:
    import hologram

    with pytest.raises(AttributeError, match="no attribute 'Kernal'"):
        hologram.Kernal  # noqa: B018
