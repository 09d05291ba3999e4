"""``lorenz new-pack``: name validation, the files written, and a project that passes its own lint
and tests as generated, and whose ``nox -s devcheck`` passes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import lorenz.authoring.scaffold
from lorenz.authoring.lint import lint_path
from lorenz.authoring.scaffold import check_pack_name, new_pack
from lorenz.cli import main


@pytest.mark.parametrize("name", ["acme", "acme_crm", "a1"])
def test_valid_names(name: str) -> None:
    """Lowercase identifiers are pack names; the tool prefix and distribution follow from them."""
    names = check_pack_name(name)
    assert names.tool.startswith(f"{name}_")
    assert names.module == f"lorenz_{name}"


@pytest.mark.parametrize("name", ["Acme", "acme-crm", "1acme", "acme__crm", "class", "acme_", "", "a" * 41])
def test_invalid_names(name: str) -> None:
    """Anything but a lowercase identifier (or a Python keyword) is refused with the rule spelled out."""
    with pytest.raises(ValueError, match="use a lowercase Python identifier"):
        check_pack_name(name)


def test_files_written(tmp_path: Path) -> None:
    """The project has packaging, the pack, a tracker on request, a README and tests."""
    written = new_pack("acme_crm", tmp_path / "proj", tracker=True)
    relative = sorted(str(path.relative_to(tmp_path / "proj")) for path in written)
    assert relative == [
        ".gitignore",
        "README.md",
        "lorenz_acme_crm/__init__.py",
        "lorenz_acme_crm/plugin.py",
        "lorenz_acme_crm/py.typed",
        "lorenz_acme_crm/tools.py",
        "lorenz_acme_crm/tracker.py",
        "noxfile.py",
        "pyproject.toml",
        "tests/test_acme_crm_pack.py",
    ]
    pyproject = (tmp_path / "proj" / "pyproject.toml").read_text()
    assert 'name = "lorenz-acme-crm"' in pyproject
    assert '[project.entry-points."lorenz.tool_packs"]\nacme_crm = "lorenz_acme_crm.plugin"' in pyproject


@pytest.mark.parametrize("tracker", [False, True])
def test_the_template_is_the_project_it_writes_for_its_own_name(tmp_path: Path, tracker: bool) -> None:
    """The template project is real code: named ``template_pack`` it writes itself back, but for the
    ``--tracker`` choices (which plugin module, the tracker-only tests, the README's mount note)."""
    template = Path(lorenz.authoring.scaffold.__file__).parent / "project"
    written = new_pack("template_pack", tmp_path / "proj", tracker=tracker)
    for path in written:
        relative = path.relative_to(tmp_path / "proj").as_posix()
        source = {".gitignore": "gitignore", "README.md": None, "tests/test_template_pack_pack.py": None}.get(
            relative, relative
        )
        if tracker and relative.endswith("/plugin.py"):
            source = relative.replace("/plugin.py", "/plugin_with_tracker.py")
        if source is not None:
            assert path.read_bytes() == (template / source).read_bytes(), relative
    tests = (tmp_path / "proj/tests/test_template_pack_pack.py").read_text(encoding="utf-8")
    common, marker, tracker_only = (
        (template / "tests/test_template_pack_pack.py")
        .read_text("utf-8")
        .partition("\n\n# Written with --tracker only.\n")
    )
    assert marker
    assert tests == (common + "\n\n" + tracker_only if tracker else common)


def test_refuses_a_non_empty_directory(tmp_path: Path) -> None:
    """An existing non-empty directory is never overwritten."""
    (tmp_path / "keep.txt").write_text("mine")
    with pytest.raises(ValueError, match="already exists and is not empty"):
        new_pack("acme", tmp_path)


def test_cli_new_pack(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """`lorenz new-pack NAME` writes ./lorenz-NAME; a bad name is one `lorenz:` line and exit 1."""
    monkeypatch.chdir(tmp_path)
    assert main(["new-pack", "acme"]) == 0
    assert (tmp_path / "lorenz-acme" / "lorenz_acme" / "tools.py").is_file()
    assert f"created {tmp_path / 'lorenz-acme'}" in capsys.readouterr().out
    assert main(["new-pack", "Acme"]) == 1
    assert capsys.readouterr().err.startswith("lorenz: invalid pack name 'Acme'")


# The devcheck commands, in order, as nox echoes them (`nox > ...`).
DEVCHECK = [
    "ruff check .",
    "ruff format --check .",
    "mypy --strict {module}",
    "lorenz lint .",
    "pytest",
]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "tracker"),
    # The longest pack name a project can have: the templates' lines must still fit ruff's 120.
    [("acme", False), ("abcdefghij_klmnopqrst_uvwxyz_abcdefghijk", True)],
)
def test_generated_project_passes_nox_devcheck(tmp_path: Path, name: str, tracker: bool) -> None:
    """As generated, the project lints clean (no diagnostic at all, warnings included), and `nox -s
    devcheck` in it runs ruff, mypy --strict, `lorenz lint .` and pytest, and passes. Run by nox
    itself, in this environment (`--no-venv --no-install`: nothing is fetched)."""
    project = tmp_path / "lorenz-project"
    new_pack(name, project, tracker=tracker)
    assert lint_path(project).diagnostics == ()
    env = {key: value for key, value in os.environ.items() if not key.startswith(("LORENZ_", "NOX_"))}
    env["PYTHONPATH"] = str(project)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    result = subprocess.run(
        [sys.executable, "-m", "nox", "--no-venv", "--no-install", "--no-color", "-s", "devcheck"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    ran = [line.removeprefix("nox > ").strip() for line in output.splitlines() if line.startswith("nox > ")]
    # nox's own status lines ("Running session devcheck") do not start with a program.
    commands = [line for line in ran if line and shutil.which(line.split()[0], path=env["PATH"])]
    assert commands == [command.format(module=f"lorenz_{name}") for command in DEVCHECK], output
    assert "Session devcheck was successful" in output
    assert f"{10 if tracker else 9} passed" in output


def _without_the_core(tmp_path: Path) -> Path:
    """A directory that shows this environment's packages but lorenz-core (and the bundled plugins that
    need it): on PYTHONPATH, pip finds every dependency installed and must get the core elsewhere."""
    view = tmp_path / "deps"
    view.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not entry.name.startswith(("lorenz", "_editable_impl_lorenz", "__editable__")):
            (view / entry.name).symlink_to(entry)
    return view


@pytest.mark.slow
def test_devcheck_installs_the_core_from_the_wheelhouse(tmp_path: Path) -> None:
    """Issue 44: `lorenz new-pack` puts the running core in wheelhouse/, and `nox -s devcheck` in a
    virtualenv of its own installs it from there where the package index has no lorenz-core (here: no
    index at all, every other dependency on PYTHONPATH); without the wheelhouse it cannot."""
    project = tmp_path / "lorenz-acme"
    assert main(["new-pack", "acme", "--dir", str(project)]) == 0
    (wheel,) = (project / "wheelhouse").glob("lorenz_core-*-py3-none-any.whl")
    env = {key: value for key, value in os.environ.items() if not key.startswith(("LORENZ_", "NOX_", "PIP_"))}
    shims = tmp_path / "shims"  # mypy and pytest run by the session's python, as if installed there
    shims.mkdir()
    for tool in ("mypy", "pytest"):
        (shims / tool).write_text(f'#!/bin/sh\nexec python -m {tool} "$@"\n', encoding="utf-8")
        (shims / tool).chmod(0o755)
    env.update(
        PYTHONPATH=str(_without_the_core(tmp_path)),
        PATH=os.pathsep.join([str(shims), str(Path(sys.executable).parent), env.get("PATH", "")]),  # ruff
        PIP_CONFIG_FILE=os.devnull,
        PIP_NO_INDEX="1",
        PIP_NO_BUILD_ISOLATION="0",  # (sic) no isolation: the build backend is on PYTHONPATH
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        VIRTUALENV_NO_PERIODIC_UPDATE="1",
    )

    def devcheck() -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "nox", "--no-color", "-s", "devcheck"]
        return subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=600)

    aside = tmp_path / "aside"
    (project / "wheelhouse").rename(aside)
    without = devcheck()
    assert without.returncode != 0
    assert "No matching distribution found for lorenz-core" in without.stdout + without.stderr
    aside.rename(project / "wheelhouse")
    checked = devcheck()
    output = checked.stdout + checked.stderr
    assert checked.returncode == 0, output
    assert f"nox > python -m pip install {wheel}" in output
    assert "Session devcheck was successful" in output
    installed = list((project / ".nox" / "devcheck").glob("lib/python3*/site-packages/lorenz/__init__.py"))
    assert installed, "the core came from the wheelhouse into the session's virtualenv"


def test_the_devcheck_installs_the_dev_extra(tmp_path: Path) -> None:
    """Outside the offline test, the session installs the project with its `dev` extra, which brings
    the checkers and the tests' dependencies; the README says `nox -s devcheck`."""
    new_pack("acme", tmp_path / "proj")
    noxfile = (tmp_path / "proj" / "noxfile.py").read_text()
    assert 'session.install("-e", ".[dev]")' in noxfile
    pyproject = (tmp_path / "proj" / "pyproject.toml").read_text()
    assert 'dev = ["lorenz-acme[test]", "ruff>=0.8", "mypy>=1.13"]' in pyproject
    assert "nox -s devcheck" in (tmp_path / "proj" / "README.md").read_text()


@pytest.mark.anyio
async def test_example_pack_shows_enrichment_and_a_confirmed_write(tmp_path: Path) -> None:
    """The generated pack, loaded as written: the read tool advertises its enrichment notice, the
    write tool is destructive and needs client input, and it writes only once the user confirms."""
    import importlib.util

    from lorenz.testing import make_pack_host

    new_pack("acme", tmp_path / "proj")
    spec = importlib.util.spec_from_file_location("scaffold_probe_tools", tmp_path / "proj/lorenz_acme/tools.py")
    assert spec is not None and spec.loader is not None
    tools = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tools)
    host = make_pack_host(tools.PACK, base_dir=tmp_path)
    listed = {entry.name: entry for entry in await host.list_tools()}
    assert sorted(listed) == ["acme_reverse_text", "acme_save_note"]
    assert "notice" in (listed["acme_reverse_text"].output_schema or {})["properties"]
    annotations = listed["acme_save_note"].annotations
    assert annotations is not None and annotations.destructive_hint is True
    assert [entry.name for entry in tools.PACK.tools if entry.needs_client_input] == ["acme_save_note"]
    empty = await host.call("acme_reverse_text", {"text": ""})
    assert empty.result["notice"] == "The text is empty: there is nothing to reverse."
    no = {"confirm": {"action": "accept", "content": {"confirm": False}}}
    declined = await host.call("acme_save_note", {"name": "todo", "text": "x"}, answers=no)
    assert declined.result == {"note": "notes/todo.md", "saved": False}
    assert not (tmp_path / "notes").exists()
    yes = {"confirm": {"action": "accept", "content": {"confirm": True}}}
    saved = await host.call("acme_save_note", {"name": "todo", "text": "x"}, answers=yes)
    assert saved.result == {"note": "notes/todo.md", "saved": True}
    assert (tmp_path / "notes" / "todo.md").read_text(encoding="utf-8") == "x\n"
    # Issue 44: sandboxed, it may write where its notes go (notes_dir, relative to WORKFLOW.md), and only there.
    from lorenz.plugins.declared import permissions_of

    elsewhere = make_pack_host(tools.PACK, base_dir=tmp_path, options={"acme": {"notes_dir": "memo"}})
    declared = permissions_of(tools.PACK, elsewhere.settings)
    assert declared is not None and declared.to_dict()["write"] == [str(tmp_path / "memo")]
    assert declared.describe() == f"write: {tmp_path / 'memo'}; no subprocess"
