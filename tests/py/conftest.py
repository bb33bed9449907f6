"""pytest options and shared fixtures: the vellum binary under test and the shared fixtures dir."""
import pathlib
import subprocess

import pytest


def pytest_addoption(parser):
    parser.addoption("--vellum", required=True, help="path to the vellum binary")
    parser.addoption("--fixtures-dir", required=True, help="path to ../shared/fixtures")


@pytest.fixture(scope="session")
def vellum(request) -> pathlib.Path:
    path = pathlib.Path(request.config.getoption("--vellum")).resolve()
    assert path.exists(), f"vellum binary not found at {path}"
    return path


@pytest.fixture(scope="session")
def fixtures(request) -> pathlib.Path:
    path = pathlib.Path(request.config.getoption("--fixtures-dir"))
    if not path.is_dir():
        pytest.skip(f"fixtures not found at {path}")
    return path


def run(*args, check=True):
    """Runs a command, returning CompletedProcess with text output; fails the test with stderr on error."""
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, args))} exited {p.returncode}:\n{p.stderr}")
    return p


@pytest.fixture(scope="session")
def stories_gguf(vellum, fixtures, tmp_path_factory) -> pathlib.Path:
    src = fixtures / "stories260K"
    out = tmp_path_factory.mktemp("stories") / "stories260K.gguf"
    run(vellum, "gguf", "convert-llama2c", src / "stories260K.bin", src / "tok512.bin", out)
    return out
