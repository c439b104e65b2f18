"""The files every package carries, and the metadata an index and a reader look for: the licence's
text, a changelog entry for the version being built, how to contribute and to report a
vulnerability, classifiers, keywords and project URLs; `--version` is the installed package's."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

from verify import __version__

REPO = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def test_the_license_file_is_the_apache_2_text_pyproject_names() -> None:
    text = (REPO / "LICENSE").read_text()
    assert PROJECT["license"] == "Apache-2.0" and PROJECT["license-files"] == ["LICENSE"]
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text
    assert "END OF TERMS AND CONDITIONS" in text


def test_the_changelog_has_an_entry_for_the_version_being_built() -> None:
    text = (REPO / "CHANGELOG.md").read_text()
    assert "keepachangelog.com" in text
    heads = re.findall(r"^## \[([^\]]+)\]", text, flags=re.M)
    assert heads and heads[0] in ("Unreleased", __version__)
    assert __version__ in heads
    for version in heads:
        if version != "Unreleased":
            assert f"[{version}]: https://" in text, f"no link for {version}"


def test_contributing_and_security_say_what_a_reader_comes_for() -> None:
    contributing = (REPO / "CONTRIBUTING.md").read_text()
    for said in ("make venv", "make lint", "make test", "kubesim", "python -m verify.docs", "mkdocs"):
        assert said in contributing, said
    security = (REPO / "SECURITY.md").read_text()
    assert "Report a vulnerability" in security and "never" in security
    for promise in ("Secret values", "escape", "--timeout", "restart"):
        assert promise in security, promise


def test_pyproject_names_classifiers_keywords_and_urls() -> None:
    assert "Programming Language :: Python :: 3.11" in PROJECT["classifiers"]
    assert {"kubernetes", "rollout"} <= set(PROJECT["keywords"])
    urls = PROJECT["urls"]
    assert {"Homepage", "Documentation", "Repository", "Issues", "Changelog"} <= set(urls)
    assert all(u.startswith("https://") for u in urls.values())
    # one version: pyproject reads verify.__version__, the installed metadata carries it
    assert "version" not in PROJECT and PROJECT["dynamic"] == ["version"]
    assert metadata.version("rollout-verify") == __version__


def test_version_prints_the_installed_package_version() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "verify", "--version"], capture_output=True, text=True, timeout=60, cwd=REPO
    )
    assert (done.returncode, done.stdout, done.stderr) == (
        0,
        f"rollout-verify {metadata.version('rollout-verify')}\n",
        "",
    )


def test_the_readme_is_the_short_way_in_and_every_link_of_it_resolves() -> None:
    readme = (REPO / "README.md").read_text()
    assert len(readme.splitlines()) <= 300
    for said in ("make demo", "make test", "## Exit codes", "uses: ", "templateRef:", "include:"):
        assert said in readme, said
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme)
    local = [link for link in links if "://" not in link]
    assert "docs/troubleshooting.md" in local and "docs/build-your-own-image.md" in local
    missing = [link for link in local if not (REPO / link).is_file()]
    assert not missing, missing
