"""Small Java programs of icefloe's tests, compiled against the Java engine's jars.

The sources are in ``tests/interop/java``; they call Iceberg's own classes (the engine's Iceberg
1.9.2 runtime jar) and parquet-mr (Spark's jars) to check icefloe's bytes against Java's. They
are compiled once (``javac`` of the JDK) into ``~/.cache/icefloe/java-probes/<digest>``, where
the digest covers the sources and the jars, and reused while it stays the same. A probe reads
commands from stdin (one per line, tab-separated words) and answers each with one line.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from interop.engines import EngineError, engines_home, ensure_environment

__all__ = ["JavaProbe", "compile_probes"]

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "java"
_TIMEOUT = 600


def _site_packages() -> Path:
    python = ensure_environment("java")
    found = sorted(python.parent.parent.glob("lib/python3*/site-packages"))
    if not found:
        raise EngineError("java", f"no site-packages under {python.parent.parent}")
    return found[-1]


# Spark's jars the probes need besides Iceberg's runtime (which shades Avro, Parquet, Jackson):
# Hadoop's client (Parquet's Configuration), zstd (icefloe's codec) and SLF4J. A short class path
# starts the JVM fast.
_SPARK_JARS = ("slf4j-api-*.jar", "hadoop-client-api-*.jar", "hadoop-client-runtime-*.jar", "zstd-jni-*.jar")


def _class_path_jars() -> list[Path]:
    """Iceberg's Spark runtime (Scala 2.12, as the engine's Spark) and the Spark jars it needs."""
    site = _site_packages()
    runtime = sorted(
        (site / "snowpark_connect_deps_iceberg" / "jars").glob("iceberg-spark-runtime-3.5_2.12-*.jar")
    )
    if not runtime:
        raise EngineError("java", f"no iceberg-spark-runtime jar under {site}")
    jars = [runtime[-1]]
    for pattern in _SPARK_JARS:
        found = sorted((site / "pyspark" / "jars").glob(pattern))
        if not found:
            raise EngineError("java", f"no {pattern} among Spark's jars under {site}")
        jars.append(found[-1])
    return jars


def _digest(sources: list[Path], jars: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in sources:
        digest.update(str(path.relative_to(SOURCES)).encode())
        digest.update(path.read_bytes())
    for jar in jars:
        digest.update(jar.name.encode())
    return digest.hexdigest()[:16]


def compile_probes() -> JavaProbe:
    """The compiled probes (compiled now unless a cached build of the same sources exists).

    Raises:
        EngineError: no Java engine, or ``javac`` failed (its output in the message).
    """
    javac = shutil.which("javac")
    if javac is None:
        raise EngineError("java", "javac (a JDK) is not installed")
    jars = _class_path_jars()
    sources = sorted(SOURCES.rglob("*.java"))
    target = engines_home().parent / "java-probes" / _digest(sources, jars)
    if not (target / ".complete").exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        building = Path(tempfile.mkdtemp(prefix="building-", dir=target.parent))
        result = subprocess.run(
            [
                javac,
                "-nowarn",
                "-d",
                str(building),
                "-cp",
                os.pathsep.join(map(str, jars)),
                *map(str, sources),
            ],
            capture_output=True,
            text=True,
            timeout=_TIMEOUT,
            check=False,
        )
        if result.returncode != 0:
            shutil.rmtree(building, ignore_errors=True)
            raise EngineError("java", f"javac failed:\n{result.stdout}{result.stderr}")
        (building / ".complete").write_text("ok")
        try:
            building.rename(target)  # atomic: a concurrent session may have won; use either
        except OSError:
            shutil.rmtree(building, ignore_errors=True)
    return JavaProbe(target, jars)


class JavaProbe:
    """Runs the compiled probe programs."""

    def __init__(self, classes: Path, jars: list[Path]):
        self.class_path = os.pathsep.join([str(classes), *map(str, jars)])

    def answers(self, main: str, commands: list[list[str]]) -> list[list[str]]:
        """Run ``main`` (a class name) on ``commands`` in one JVM; each answer is ``["ok",
        result words...]`` or ``["error", Java exception class, message]``.

        Raises:
            EngineError: the program did not answer every command.
        """
        lines = "".join("\t".join(command) + "\n" for command in commands)
        result = subprocess.run(
            ["java", "-XX:TieredStopAtLevel=1", "-cp", self.class_path, main],
            input=lines,
            capture_output=True,
            text=True,
            timeout=_TIMEOUT,
            check=False,
        )
        answers = [
            line.split("\t") for line in result.stdout.splitlines() if line.startswith(("ok\t", "error\t"))
        ]
        if result.returncode != 0 or len(answers) != len(commands):
            raise EngineError("java", f"{main} failed (exit {result.returncode}):\n{result.stderr[-4000:]}")
        return answers

    def run(self, main: str, commands: list[list[str]]) -> list[list[str]]:
        """The result words of each command (:meth:`answers` without the ``ok``).

        Raises:
            EngineError: a command failed (naming it and Java's exception).
        """
        results = []
        for command, answer in zip(commands, self.answers(main, commands)):
            if answer[0] != "ok":
                raise EngineError("java", f"{command[0]} failed in Java: {' '.join(answer[1:])}")
            results.append(answer[1:])
        return results
