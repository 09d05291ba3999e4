"""The wheelhouse ``lorenz new-pack`` writes into a new project: a wheel of the running ``lorenz-core``,
so that the project's ``nox -s devcheck`` installs that same core wherever it runs, from a package
index that has no ``lorenz-core`` (or none yet) as from one that has it. The wheel is packed from the
installed files (an editable checkout's package directory included): nothing is built or fetched."""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import zipfile
from pathlib import Path

import lorenz

__all__ = ["CORE_DISTRIBUTION", "WHEELHOUSE", "write_core_wheel"]

CORE_DISTRIBUTION = "lorenz-core"
#: The project's directory of wheels its noxfile installs first.
WHEELHOUSE = "wheelhouse"

_WHEEL = "Wheel-Version: 1.0\nGenerator: lorenz new-pack\nRoot-Is-Purelib: true\nTag: py3-none-any\n"


def _digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")


def write_core_wheel(project: Path) -> Path:
    """Write ``<project>/wheelhouse/lorenz_core-<version>-py3-none-any.whl`` from the running core:
    the ``lorenz`` package's files (no bytecode) and its distribution's metadata and entry points."""
    dist = importlib.metadata.distribution(CORE_DISTRIBUTION)
    package = Path(lorenz.__file__).parent
    stem = f"lorenz_core-{dist.version}"
    info = f"{stem}.dist-info"
    folder = project / WHEELHOUSE
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / f"{stem}-py3-none-any.whl"
    records: list[str] = []
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:

        def add(name: str, data: bytes) -> None:
            archive.writestr(name, data)
            records.append(f"{name},{_digest(data)},{len(data)}")

        for path in sorted(package.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix not in (".pyc", ".pyo"):
                add(f"lorenz/{path.relative_to(package).as_posix()}", path.read_bytes())
        for name in ("METADATA", "entry_points.txt"):
            text = dist.read_text(name)
            if text is not None:
                add(f"{info}/{name}", text.encode("utf-8"))
        add(f"{info}/WHEEL", _WHEEL.encode("ascii"))
        archive.writestr(f"{info}/RECORD", "\n".join([*records, f"{info}/RECORD,,"]) + "\n")
    return wheel
