"""`pip install .` into a fresh virtual environment, then the console script from another folder:
the shipped catalog travels as package data and PLANNER_HOME defaults to the user's cache folder."""
import json
import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

from tests.helpers import ROOT


def test_wheel_installs_and_runs_from_another_directory(tmp_path):
    wheels = tmp_path / "wheels"
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(ROOT)],
                           check=True, capture_output=True, text=True, timeout=300)
    # every folder of data is a package of its own: setuptools prints no "Package would be ignored"
    assert "would be ignored" not in built.stdout + built.stderr
    env_dir = tmp_path / "venv"
    # a fresh environment without a pip of its own (ensurepip took ~4 s): this run's pip installs into it
    # (`pip --python`: pip runs under the new environment's interpreter, as its own pip would)
    venv.EnvBuilder(with_pip=False).create(env_dir)
    py = env_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    wheel = next(wheels.glob("drafter_planner-*.whl"))
    subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps", "--no-index",
                    str(wheel)], check=True, capture_output=True, timeout=300)
    # the pinned dependencies come from this test run's environment (no download): a .pth line
    purelib = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  capture_output=True, text=True, check=True).stdout.strip())
    (purelib / "zz_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PLANNER_HOME", "PYTHONPATH")}
    env.update(HOME=str(tmp_path / "home"), XDG_CACHE_HOME=str(tmp_path / "cache"))
    script = env_dir / ("Scripts/planner.exe" if os.name == "nt" else "bin/planner")
    where = subprocess.run([str(py), "-c", "import planner; print(planner.__file__)"], cwd=elsewhere, env=env,
                           capture_output=True, text=True, check=True).stdout
    assert str(purelib) in where                       # the installed copy, not the source tree

    r = subprocess.run([str(script), "components", "--json"], cwd=elsewhere, env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    ids = {c["id"] for c in json.loads(r.stdout)}
    assert {"openorca", "sharegpt", "agentic"} <= ids
    r = subprocess.run([str(script), "estimate", "--preset", "seed-article", "--json"], cwd=elsewhere, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["storage_bytes"] == 913_786 * 800 * 51_204
    # what it built went to the user's cache folder, nothing into site-packages or the cwd
    assert list((tmp_path / "cache" / "drafter-planner").glob("catalog-*.duckdb"))
    assert not list(purelib.rglob("*.duckdb")) and not list(elsewhere.iterdir())


def test_the_version_is_written_once():
    # pyproject.toml reads it from planner/_version.py; the installed metadata says the same
    import importlib.metadata
    import tomllib

    import planner
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"] and project["project"]["dynamic"] == ["version"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "planner._version.__version__"}
    assert importlib.metadata.version("drafter-planner") == planner.__version__
