"""Shared helpers for the manifest tests: a local FileIO and the Java-written fixtures."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from icefloe.io import LocalFileIO
from icefloe.spec.manifest import ManifestFile

FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture
def io() -> LocalFileIO:
    return LocalFileIO()


def fixture_path(case: str, location: str) -> str:
    """Where the fixture copy of a file Java wrote at ``location`` lives."""
    return str(FIXTURES / case / location.rsplit("/", 1)[-1])


def relocated(case: str, manifest: ManifestFile) -> ManifestFile:
    """The manifest list row, pointing at the fixture copy of the manifest."""
    return dataclasses.replace(manifest, manifest_path=fixture_path(case, manifest.manifest_path))
