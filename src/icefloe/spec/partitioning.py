"""Partition specs: how partition values derive from a row (spec: "Partitioning").

A ``PartitionSpec`` is a list of ``PartitionField``s, each a transform of one source column.
Partition values travel as tuples in spec field order, in icefloe's value representation (see
``icefloe.spec.types``). Specs are built from strings in Spark's ``PARTITIONED BY`` form
(``"country"``, ``"day(ts)"``, ``"bucket(16, id)"``, ``"truncate(4, name)"``) or with
``PartitionSpecBuilder``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from icefloe.errors import ValidationError
from icefloe.spec.schema import Schema
from icefloe.spec.transforms import Transform, parse_transform, partition_path_segment
from icefloe.spec.types import IcebergType, IntegerType, NestedField, StructType

__all__ = [
    "PARTITION_DATA_ID_START",
    "UNPARTITIONED_SPEC",
    "PartitionField",
    "PartitionSpec",
    "PartitionSpecBuilder",
    "SpecProblem",
    "build_spec",
    "parse_partition_term",
    "source_problem",
    "spec_binding_problem",
]

#: Partition field ids start here (v1 tables without explicit ids number from it too).
PARTITION_DATA_ID_START = 1000


@dataclass(frozen=True, slots=True)
class PartitionField:
    source_id: int
    field_id: int
    transform: Transform
    name: str

    def __post_init__(self) -> None:
        if isinstance(self.transform, str):
            object.__setattr__(self, "transform", parse_transform(self.transform))

    def __str__(self) -> str:
        return f"{self.field_id}: {self.name}: {self.transform}({self.source_id})"


@dataclass(frozen=True, slots=True)
class PartitionSpec:
    """A partition spec. ``spec_id`` is its id in the table metadata."""

    fields: tuple[PartitionField, ...] = ()
    spec_id: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(self.fields))
        names = [f.name for f in self.fields]
        dup = next((n for n in names if names.count(n) > 1), None)
        if dup is not None:
            raise ValidationError(f"partition spec {self.spec_id}: duplicate partition field name '{dup}'")

    @property
    def is_unpartitioned(self) -> bool:
        """True when no field actually partitions data (only void transforms, or none)."""
        return all(f.transform.is_void for f in self.fields)

    @property
    def is_partitioned(self) -> bool:
        return not self.is_unpartitioned

    @property
    def last_assigned_field_id(self) -> int:
        return max((f.field_id for f in self.fields), default=PARTITION_DATA_ID_START - 1)

    def fields_by_source_id(self, source_id: int) -> list[PartitionField]:
        return [f for f in self.fields if f.source_id == source_id]

    def partition_type(self, schema: Schema) -> StructType:
        """The struct of partition values (all optional), typed by each transform's result.

        A source column the schema no longer has (dropped after the spec was used) gets the
        type the transform produces from anything: Java handles this the same way for void
        transforms; other transforms of missing columns are an error.
        """
        result: list[NestedField] = []
        for pf in self.fields:
            source = schema.find_field(pf.source_id)
            if source is None:
                if not pf.transform.is_void:
                    raise ValidationError(
                        f"partition field '{pf.name}' of spec {self.spec_id}: source column id "
                        f"{pf.source_id} is not in schema {schema.schema_id}"
                    )
                from_type: IcebergType = _void_result_type()
            else:
                from_type = pf.transform.result_type(source.field_type)
            result.append(NestedField(pf.field_id, pf.name, from_type, required=False))
        return StructType(*result)

    def partition_to_path(self, values: Sequence[Any], schema: Schema) -> str:
        """The directory path Java writes for these partition values: ``a=1/b=x``."""
        if len(values) != len(self.fields):
            raise ValidationError(
                f"partition spec {self.spec_id} has {len(self.fields)} fields, got {len(values)} values"
            )
        segments = []
        for pf, value in zip(self.fields, values):
            source = schema.find_field(pf.source_id)
            source_type = source.field_type if source is not None else _void_result_type()
            segments.append(partition_path_segment(pf.name, pf.transform, source_type, value))
        return "/".join(segments)

    def compatible_with(self, other: PartitionSpec) -> bool:
        """Same fields (source, transform, name) in the same order, whatever the ids."""
        return len(self.fields) == len(other.fields) and all(
            (a.source_id, a.transform, a.name) == (b.source_id, b.transform, b.name)
            for a, b in zip(self.fields, other.fields)
        )

    def __str__(self) -> str:
        inner = ", ".join(str(f) for f in self.fields)
        return f"[{inner}]"

    def __repr__(self) -> str:
        # The spec holds source column ids only (names need a schema): each field reads
        # "<field id>: <name> = <transform>(source <column id>)".
        fields = ", ".join(
            f"{f.field_id}: {f.name} = {f.transform}(source {f.source_id})" for f in self.fields
        )
        return f"PartitionSpec(spec_id={self.spec_id}, fields=[{fields}])"


@dataclass(frozen=True, slots=True)
class SpecProblem:
    """Why a partition spec or sort order does not bind to a schema.

    Attributes:
        index: the position of the field at fault in the spec's (or order's) fields.
        key: the JSON key of that field that is wrong (``name``, ``source-id``, ``transform``).
        message: what is wrong, naming the field, the column id and the schema.
    """

    index: int
    key: str
    message: str


def spec_binding_problem(spec: PartitionSpec, schema: Schema, *, check_sources: bool) -> SpecProblem | None:
    """The first reason ``spec`` does not bind to ``schema`` as Java binds it, or None.

    Java binds every spec of a table to its current schema (on load and whenever the schema
    changes). Every spec must pass the name checks: no empty name, and a name that is also a
    column of the schema must be sourced from that column (while its source still exists).
    Only the default spec must also resolve: with ``check_sources``, each field that is not
    void needs a primitive source column in the schema, outside lists and maps, of a type its
    transform accepts. Older specs may name columns that were dropped since; their data is
    still read (with the values the manifests hold).
    """
    for i, pf in enumerate(spec.fields):
        if not pf.name:
            return SpecProblem(i, "name", f"partition field {i} of spec {spec.spec_id} has an empty name")
        if schema.find_field(pf.source_id) is not None:
            same_name = schema.find_field(pf.name)
            if same_name is not None and same_name.field_id != pf.source_id:
                return SpecProblem(
                    i,
                    "name",
                    f"partition field '{pf.name}' of spec {spec.spec_id} is sourced from column id "
                    f"{pf.source_id} ('{schema.find_column_name(pf.source_id)}'), but schema "
                    f"{schema.schema_id} has a different column named '{pf.name}' (id {same_name.field_id})",
                )
    if not check_sources:
        return None
    for i, pf in enumerate(spec.fields):
        if pf.transform.is_void:
            continue  # v1 replaces a removed partition field by a void transform of any source
        problem = source_problem(
            schema,
            pf.source_id,
            pf.transform,
            f"partition field '{pf.name}' of the default spec {spec.spec_id}",
            "partition by",
            in_structs_only=True,
        )
        if problem is not None:
            return SpecProblem(i, problem[0], problem[1])
    return None


def source_problem(
    schema: Schema, source_id: int, transform: Transform, what: str, verb: str, *, in_structs_only: bool
) -> tuple[str, str] | None:
    """(JSON key, message) when ``source_id`` cannot feed ``transform`` in ``schema``, or None.

    Java's ``checkCompatibility`` of partition specs and sort orders; only partition sources
    must not sit inside a list or map (``in_structs_only``).
    """
    source = schema.find_field(source_id)
    if source is None:
        return "source-id", (
            f"{what} has source column id {source_id}, which is not in the current schema "
            f"(schema {schema.schema_id}, columns {schema.column_names})"
        )
    name = schema.find_column_name(source_id)
    if not source.field_type.is_primitive:
        return "source-id", f"{what}: cannot {verb} column '{name}' of non-primitive type {source.field_type}"
    if not transform.can_transform(source.field_type):
        return (
            "transform",
            f"{what}: {transform} cannot transform column '{name}' of type {source.field_type}",
        )
    parent = schema.parent_id(source_id) if in_structs_only else None
    while parent is not None:
        parent_type = schema.find_type(parent)
        if parent_type is None or not parent_type.is_struct:
            return "source-id", (
                f"{what}: column '{name}' is inside a {parent_type}; only columns of structs can be used"
            )
        parent = schema.parent_id(parent)
    return None


def _void_result_type() -> IcebergType:
    # A void transform of a dropped source column yields nulls; int is what Java reports.
    return IntegerType()


UNPARTITIONED_SPEC = PartitionSpec((), spec_id=0)

_TERM = re.compile(
    r"""^\s*(?:
        (?P<func>[A-Za-z_]+)\s*\(\s*
            (?:(?P<arg>\d+)\s*,\s*)?(?P<col1>[^(),]+?)
            (?:\s*,\s*(?P<arg2>\d+))?\s*\)
        | (?P<col>[^(),]+?)
    )\s*$""",
    re.VERBOSE,
)
_FUNCS = {
    "identity": "identity",
    "year": "year",
    "years": "year",
    "month": "month",
    "months": "month",
    "day": "day",
    "days": "day",
    "date": "day",
    "hour": "hour",
    "hours": "hour",
    "date_hour": "hour",
    "bucket": "bucket",
    "truncate": "truncate",
    "trunc": "truncate",
    "void": "void",
    "alwaysnull": "void",
}


def parse_partition_term(term: str) -> tuple[str, Transform]:
    """Parse a Spark ``PARTITIONED BY`` term into (source column name, transform).

    Accepts ``col``, ``day(col)`` / ``days(col)``, ``bucket(16, col)`` (or Iceberg's
    ``bucket[16](col)`` is not SQL and is refused), ``truncate(4, col)``; column names may be
    backquoted.

    Raises:
        ValidationError: naming the term that does not parse.
    """
    match = _TERM.match(term)
    if not match:
        raise ValidationError(
            f"cannot parse partition term {term!r}; expected e.g. 'day(ts)', 'bucket(16, id)'"
        )
    if match.group("col") is not None:
        return _unquote(match.group("col")), parse_transform("identity")
    func = match.group("func").lower()
    name = _FUNCS.get(func)
    if name is None:
        raise ValidationError(f"unknown partition transform '{func}' in {term!r}")
    arg = match.group("arg") or match.group("arg2")
    column = _unquote(match.group("col1"))
    if name in ("bucket", "truncate"):
        if arg is None:
            raise ValidationError(f"partition term {term!r}: {name} needs a width, e.g. {name}(16, {column})")
        return column, parse_transform(f"{name}[{int(arg)}]")
    if arg is not None:
        raise ValidationError(f"partition term {term!r}: {name} takes no width")
    return column, parse_transform(name)


def _unquote(name: str) -> str:
    name = name.strip()
    if len(name) >= 2 and name[0] == name[-1] == "`":
        return name[1:-1]
    return name


@dataclass
class PartitionSpecBuilder:
    """Builds a PartitionSpec against a schema, naming fields as Java does.

    Default names: identity -> the column name; bucket -> ``<col>_bucket``; truncate ->
    ``<col>_trunc``; year/month/day/hour -> ``<col>_year`` ...; void -> ``<col>_null``.
    """

    schema: Schema
    spec_id: int = 0
    last_assigned_field_id: int = PARTITION_DATA_ID_START - 1
    case_sensitive: bool = True
    _fields: list[PartitionField] = field(default_factory=list)

    def add(
        self,
        source: str | int,
        transform: Transform | str,
        name: str | None = None,
        field_id: int | None = None,
    ) -> PartitionSpecBuilder:
        """Add a partition field on column ``source`` (name or id)."""
        transform = parse_transform(transform) if isinstance(transform, str) else transform
        column = self.schema.find_field(source, self.case_sensitive)
        if column is None:
            raise ValidationError(f"cannot partition by '{source}': no such column in the schema")
        if not transform.can_transform(column.field_type):
            raise ValidationError(
                f"cannot partition column '{column.name}' of type {column.field_type} by {transform}"
            )
        column_name = self.schema.find_column_name(column.field_id) or column.name
        if name is None:
            name = _default_name(column_name, transform)
        for existing in self._fields:
            if existing.name == name:
                raise ValidationError(f"partition field name '{name}' is already used")
            if existing.source_id == column.field_id and existing.transform == transform:
                raise ValidationError(f"column '{column_name}' is already partitioned by {transform}")
        if field_id is None:
            self.last_assigned_field_id += 1
            field_id = self.last_assigned_field_id
        else:
            self.last_assigned_field_id = max(self.last_assigned_field_id, field_id)
        self._fields.append(PartitionField(column.field_id, field_id, transform, name))
        return self

    def add_term(self, term: str) -> PartitionSpecBuilder:
        column, transform = parse_partition_term(term)
        return self.add(column, transform)

    def identity(self, column: str, name: str | None = None) -> PartitionSpecBuilder:
        return self.add(column, "identity", name)

    def bucket(self, column: str, num_buckets: int, name: str | None = None) -> PartitionSpecBuilder:
        return self.add(column, f"bucket[{num_buckets}]", name)

    def truncate(self, column: str, width: int, name: str | None = None) -> PartitionSpecBuilder:
        return self.add(column, f"truncate[{width}]", name)

    def year(self, column: str, name: str | None = None) -> PartitionSpecBuilder:
        return self.add(column, "year", name)

    def month(self, column: str, name: str | None = None) -> PartitionSpecBuilder:
        return self.add(column, "month", name)

    def day(self, column: str, name: str | None = None) -> PartitionSpecBuilder:
        return self.add(column, "day", name)

    def hour(self, column: str, name: str | None = None) -> PartitionSpecBuilder:
        return self.add(column, "hour", name)

    def void(self, column: str, name: str | None = None) -> PartitionSpecBuilder:
        return self.add(column, "void", name)

    def build(self) -> PartitionSpec:
        return PartitionSpec(tuple(self._fields), spec_id=self.spec_id)


def _default_name(column: str, transform: Transform) -> str:
    text = str(transform)
    if transform.is_identity:
        return column
    if transform.is_void:
        return f"{column}_null"
    if text.startswith("bucket"):
        return f"{column}_bucket"
    if text.startswith("truncate"):
        return f"{column}_trunc"
    return f"{column}_{text}"


def build_spec(
    schema: Schema, terms: Iterable[str] | PartitionSpec | None, *, spec_id: int = 0
) -> PartitionSpec:
    """A PartitionSpec from ``partition_by`` input: a spec, a list of terms, or None."""
    if terms is None:
        return PartitionSpec((), spec_id=spec_id)
    if isinstance(terms, PartitionSpec):
        return terms
    if isinstance(terms, str):
        terms = [terms]
    builder = PartitionSpecBuilder(schema, spec_id=spec_id)
    for term in terms:
        builder.add_term(term)
    return builder.build()
