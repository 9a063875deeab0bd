"""Iceberg schemas and the tree walks over them.

A ``Schema`` is a struct of ``NestedField``s plus a schema id and identifier field ids. Fields
are found by id (stable across renames) or by full dotted name (``"location.lat"``; list
elements and map keys/values as ``"points.element.x"`` / ``"attrs.key"`` / ``"attrs.value"``,
with the short forms ``"points.x"`` and ``"attrs.y"`` accepted as in Java).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, Generic, TypeVar

from icefloe.errors import InvalidSchemaError, ValidationError
from icefloe.spec.types import (
    IcebergType,
    ListType,
    MapType,
    NestedField,
    PrimitiveType,
    StructType,
    UnknownType,
)

__all__ = [
    "Schema",
    "SchemaVisitor",
    "assign_fresh_ids",
    "index_by_id",
    "index_by_name",
    "index_parents",
    "prune_columns",
    "visit",
]

T = TypeVar("T")


class SchemaVisitor(Generic[T]):
    """A post-order visitor: children are visited before their parent.

    Override the methods you need; ``before_field`` / ``after_field`` see each field on the way
    down and up (used to track the path of names).
    """

    def schema(self, schema: Schema, struct_result: T) -> T:
        return struct_result

    def struct(self, struct: StructType, field_results: list[T]) -> T:
        raise NotImplementedError

    def field(self, field: NestedField, field_result: T) -> T:
        return field_result

    def list(self, list_type: ListType, element_result: T) -> T:
        raise NotImplementedError

    def map(self, map_type: MapType, key_result: T, value_result: T) -> T:
        raise NotImplementedError

    def primitive(self, primitive: PrimitiveType) -> T:
        raise NotImplementedError

    def before_field(self, field: NestedField) -> None:
        pass

    def after_field(self, field: NestedField) -> None:
        pass


def visit(obj: Schema | IcebergType, visitor: SchemaVisitor[T]) -> T:
    """Walk a schema or type with ``visitor``, children first."""
    if isinstance(obj, Schema):
        return visitor.schema(obj, visit(obj.as_struct(), visitor))
    if isinstance(obj, StructType):
        results = []
        for field in obj.fields:
            visitor.before_field(field)
            try:
                results.append(visitor.field(field, visit(field.field_type, visitor)))
            finally:
                visitor.after_field(field)
        return visitor.struct(obj, results)
    if isinstance(obj, ListType):
        element = obj.element_field
        visitor.before_field(element)
        try:
            element_result = visit(obj.element_type, visitor)
        finally:
            visitor.after_field(element)
        return visitor.list(obj, element_result)
    if isinstance(obj, MapType):
        key, value = obj.key_field, obj.value_field
        visitor.before_field(key)
        try:
            key_result = visit(obj.key_type, visitor)
        finally:
            visitor.after_field(key)
        visitor.before_field(value)
        try:
            value_result = visit(obj.value_type, visitor)
        finally:
            visitor.after_field(value)
        return visitor.map(obj, key_result, value_result)
    if isinstance(obj, PrimitiveType):
        return visitor.primitive(obj)
    raise ValidationError(f"cannot visit {obj!r}")


def _walk_fields(struct: IcebergType) -> Iterator[tuple[tuple[str, ...], NestedField, int | None]]:
    """Yield (name path, field, parent field id) for every field, depth first."""
    stack: list[tuple[NestedField, tuple[str, ...], int | None]] = []

    def push_children(parent: IcebergType, path: tuple[str, ...], parent_id: int | None) -> None:
        if isinstance(parent, (StructType, ListType, MapType)):
            stack.extend((child, (*path, child.name), parent_id) for child in reversed(parent.fields))

    push_children(struct, (), None)
    while stack:
        field, path, parent_id = stack.pop()
        yield path, field, parent_id
        push_children(field.field_type, path, field.field_id)


def index_by_id(struct: Schema | StructType) -> dict[int, NestedField]:
    """Every field (nested ones, list elements, map keys and values included) by its id."""
    root = struct.as_struct() if isinstance(struct, Schema) else struct
    return {field.field_id: field for _, field, _ in _walk_fields(root)}


def index_parents(struct: Schema | StructType) -> dict[int, int]:
    """The id of each nested field's parent field (top-level fields are absent)."""
    root = struct.as_struct() if isinstance(struct, Schema) else struct
    return {field.field_id: parent for _, field, parent in _walk_fields(root) if parent is not None}


def index_by_name(struct: Schema | StructType) -> dict[str, int]:
    """Field ids by full dotted name, plus Java's short aliases that omit ``element`` / ``value``.

    Full names win over aliases when both spell the same string.
    """
    root = struct.as_struct() if isinstance(struct, Schema) else struct
    full: dict[str, int] = {}
    short: dict[str, int] = {}
    stack: list[tuple[IcebergType, tuple[str, ...], tuple[str, ...]]] = [(root, (), ())]
    while stack:
        current, path, short_path = stack.pop()
        if isinstance(current, StructType):
            children = [(f, f.name, True) for f in current.fields]
        elif isinstance(current, ListType):
            children = [(current.element_field, "element", False)]
        elif isinstance(current, MapType):
            children = [(current.key_field, "key", True), (current.value_field, "value", False)]
        else:
            continue
        for field, name, keep_in_short in children:
            field_path = (*path, name)
            field_short = (*short_path, name) if keep_in_short else short_path
            full[".".join(field_path)] = field.field_id
            if field_short and field_short != field_path:
                short.setdefault(".".join(field_short), field.field_id)
            stack.append((field.field_type, field_path, field_short))
    return {**short, **full}


class Schema:
    """An immutable table schema.

    Args:
        fields: the top-level columns, in order.
        schema_id: the id of this schema in the table metadata.
        identifier_field_ids: ids of the columns that identify a row (for upserts).
    """

    __slots__ = (
        "_by_id",
        "_by_name",
        "_by_name_lower",
        "_fields",
        "_names",
        "_parents",
        "identifier_field_ids",
        "schema_id",
    )
    _fields: tuple[NestedField, ...]
    _by_id: dict[int, NestedField] | None
    _by_name: dict[str, int] | None
    _by_name_lower: dict[str, int] | None
    _parents: dict[int, int] | None
    _names: dict[int, str] | None
    # Declared for type checkers (the slots are set in __init__ through object.__setattr__).
    schema_id: int
    identifier_field_ids: tuple[int, ...]

    def __init__(
        self,
        *fields: NestedField,
        schema_id: int = 0,
        identifier_field_ids: Iterable[int] = (),
    ):
        if len(fields) == 1 and isinstance(fields[0], (list, tuple)):
            fields = tuple(fields[0])
        object.__setattr__(self, "_fields", tuple(fields))
        object.__setattr__(self, "schema_id", schema_id)
        object.__setattr__(self, "identifier_field_ids", tuple(identifier_field_ids))
        for name in ("_by_id", "_by_name", "_by_name_lower", "_parents", "_names"):
            object.__setattr__(self, name, None)
        self._validate()

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Schema is immutable; use update_schema() or replace()")

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_schema, (self._fields, self.schema_id, self.identifier_field_ids))

    def _validate(self) -> None:
        seen: dict[int, str] = {}
        for path, field, _ in _walk_fields(self.as_struct()):
            name = ".".join(path)
            if field.field_id in seen and field.field_id != 0:
                raise InvalidSchemaError(
                    f"field id {field.field_id} is used twice: by '{seen[field.field_id]}' and '{name}'"
                )
            seen[field.field_id] = name
            if isinstance(field.field_type, UnknownType) and field.required:
                raise InvalidSchemaError(f"field '{name}' of type unknown must be optional")
        for struct in _structs(self.as_struct()):
            names = [f.name for f in struct.fields]
            if len(set(names)) != len(names):
                dup = next(n for n in names if names.count(n) > 1)
                raise InvalidSchemaError(f"duplicate field name '{dup}' in schema")

    # ---- structure --------------------------------------------------------------------------

    @property
    def fields(self) -> tuple[NestedField, ...]:
        return self._fields

    @property
    def columns(self) -> tuple[NestedField, ...]:
        return self._fields

    def as_struct(self) -> StructType:
        return StructType(*self._fields)

    @property
    def highest_field_id(self) -> int:
        return max(self._id_index(), default=0)

    def replace(
        self,
        *,
        fields: Iterable[NestedField] | None = None,
        schema_id: int | None = None,
        identifier_field_ids: Iterable[int] | None = None,
    ) -> Schema:
        """A copy with some parts replaced."""
        return Schema(
            *(tuple(fields) if fields is not None else self._fields),
            schema_id=self.schema_id if schema_id is None else schema_id,
            identifier_field_ids=(
                self.identifier_field_ids if identifier_field_ids is None else identifier_field_ids
            ),
        )

    # ---- lookups ----------------------------------------------------------------------------

    def _id_index(self) -> dict[int, NestedField]:
        by_id = self._by_id
        if by_id is None:
            by_id = index_by_id(self.as_struct())
            object.__setattr__(self, "_by_id", by_id)
        return by_id

    def _name_index(self, case_sensitive: bool = True) -> dict[str, int]:
        by_name, lower = self._by_name, self._by_name_lower
        if by_name is None or lower is None:
            by_name = index_by_name(self.as_struct())
            lower = {}
            for name, fid in by_name.items():
                lower.setdefault(name.lower(), fid)
            object.__setattr__(self, "_by_name", by_name)
            object.__setattr__(self, "_by_name_lower", lower)
        return by_name if case_sensitive else lower

    def find_field(self, name_or_id: str | int, case_sensitive: bool = True) -> NestedField | None:
        """The field with this id or full name (any depth), or None (as Java's findField)."""
        if isinstance(name_or_id, int):
            return self._id_index().get(name_or_id)
        key = name_or_id if case_sensitive else name_or_id.lower()
        field_id = self._name_index(case_sensitive).get(key)
        return None if field_id is None else self._id_index()[field_id]

    def field(self, name_or_id: str | int, case_sensitive: bool = True) -> NestedField:
        """Like ``find_field`` but raises ValidationError naming the missing column."""
        found = self.find_field(name_or_id, case_sensitive)
        if found is None:
            what = f"field id {name_or_id}" if isinstance(name_or_id, int) else f"column '{name_or_id}'"
            raise ValidationError(f"{what} not found in schema {self.schema_id}: {self.column_names}")
        return found

    def find_type(self, name_or_id: str | int, case_sensitive: bool = True) -> IcebergType | None:
        found = self.find_field(name_or_id, case_sensitive)
        return None if found is None else found.field_type

    def find_column_name(self, field_id: int) -> str | None:
        """The full dotted name of the field with this id (canonical form), or None."""
        return self._name_by_id().get(field_id)

    def id_to_name(self) -> dict[int, str]:
        """Canonical full names by field id: the names on the path, joined with dots (a name
        that itself contains a dot stays as it is, as in Java). A copy: callers may change it."""
        return dict(self._name_by_id())

    def _name_by_id(self) -> dict[int, str]:
        # Built once: find_column_name is called per field in loops (schema updates, unions).
        names = self._names
        if names is None:
            names = {field.field_id: ".".join(path) for path, field, _ in _walk_fields(self.as_struct())}
            object.__setattr__(self, "_names", names)
        return names

    @property
    def column_names(self) -> list[str]:
        return [f.name for f in self._fields]

    def parent_id(self, field_id: int) -> int | None:
        parents = self._parents
        if parents is None:
            parents = index_parents(self.as_struct())
            object.__setattr__(self, "_parents", parents)
        return parents.get(field_id)

    def identifier_field_names(self) -> list[str]:
        names = self.id_to_name()
        return [names[i] for i in self.identifier_field_ids if i in names]

    def select(self, *names: str, case_sensitive: bool = True) -> Schema:
        """The schema restricted to the named columns (nested names select their parents).

        Raises:
            ValidationError: naming a column that does not exist.
        """
        if len(names) == 1 and isinstance(names[0], (list, tuple)):
            names = tuple(names[0])
        if "*" in names:
            return self
        ids = {self.field(n, case_sensitive).field_id for n in names}
        return prune_columns(self, ids)

    # ---- dunder -----------------------------------------------------------------------------

    def __iter__(self) -> Iterator[NestedField]:
        return iter(self._fields)

    def __len__(self) -> int:
        return len(self._fields)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Schema)
            and self._fields == other._fields
            and self.schema_id == other.schema_id
            and self.identifier_field_ids == other.identifier_field_ids
        )

    def same_structure(self, other: Schema) -> bool:
        """Equal fields and identifier fields, whatever the schema ids (Java's sameSchema)."""
        return self._fields == other._fields and set(self.identifier_field_ids) == set(
            other.identifier_field_ids
        )

    def __hash__(self) -> int:
        return hash((self._fields, self.schema_id, self.identifier_field_ids))

    def __repr__(self) -> str:
        # Names and types first, ids beside them: "id: long (1, required)".
        columns = ", ".join(_field_text(f) for f in self._fields)
        identifiers = (
            f", identifier_field_ids={list(self.identifier_field_ids)}" if self.identifier_field_ids else ""
        )
        return f"Schema(schema_id={self.schema_id}, columns=[{columns}]{identifiers})"

    def __str__(self) -> str:
        lines = [f"table {{  -- schema {self.schema_id}"]
        lines += [f"  {f}" for f in self._fields]
        lines.append("}")
        return "\n".join(lines)


def _field_text(field: NestedField) -> str:
    """``name: type (id[, required])``, nested fields inside the type."""
    return f"{field.name}: {_type_text(field.field_type)} ({field.field_id}{', required' if field.required else ''})"


def _type_text(type_: IcebergType) -> str:
    if isinstance(type_, StructType):
        return "struct<" + ", ".join(_field_text(f) for f in type_.fields) + ">"
    if isinstance(type_, ListType):
        return f"list<{_type_text(type_.element_type)}>"
    if isinstance(type_, MapType):
        return f"map<{_type_text(type_.key_type)}, {_type_text(type_.value_type)}>"
    return str(type_)


def _rebuild_schema(fields: tuple[NestedField, ...], schema_id: int, ids: tuple[int, ...]) -> Schema:
    return Schema(*fields, schema_id=schema_id, identifier_field_ids=ids)


def _structs(root: StructType) -> Iterator[StructType]:
    stack: list[IcebergType] = [root]
    while stack:
        current = stack.pop()
        if isinstance(current, StructType):
            yield current
        if current.is_nested:
            stack.extend(f.field_type for f in current.fields)  # type: ignore[attr-defined]


def assign_fresh_ids(obj: Schema | StructType, next_id: Callable[[], int], *, schema_id: int = 0) -> Schema:
    """A copy with every field renumbered by ``next_id``, in Java's order.

    Java assigns the ids of all fields of a struct before descending into any of them, so a
    schema created here gets the ids Java would give it (top-level columns 1..n first).
    Identifier fields are carried over by name.
    """
    struct = obj.as_struct() if isinstance(obj, Schema) else obj
    new_struct = _fresh_struct(struct, next_id)
    identifier_ids: list[int] = []
    if isinstance(obj, Schema) and obj.identifier_field_ids:
        new_names = index_by_name(new_struct)
        old_names = obj.id_to_name()
        identifier_ids = [new_names[old_names[i]] for i in obj.identifier_field_ids]
    return Schema(*new_struct.fields, schema_id=schema_id, identifier_field_ids=identifier_ids)


def _fresh_type(field_type: IcebergType, next_id: Callable[[], int]) -> IcebergType:
    if isinstance(field_type, StructType):
        return _fresh_struct(field_type, next_id)
    if isinstance(field_type, ListType):
        element_id = next_id()
        return ListType(
            element_id, _fresh_type(field_type.element_type, next_id), field_type.element_required
        )
    if isinstance(field_type, MapType):
        key_id, value_id = next_id(), next_id()
        return MapType(
            key_id,
            _fresh_type(field_type.key_type, next_id),
            value_id,
            _fresh_type(field_type.value_type, next_id),
            field_type.value_required,
        )
    return field_type


def _fresh_struct(struct: StructType, next_id: Callable[[], int]) -> StructType:
    ids = [next_id() for _ in struct.fields]
    return StructType(
        *(
            NestedField(
                new_id,
                f.name,
                _fresh_type(f.field_type, next_id),
                f.required,
                f.doc,
                f.initial_default,
                f.write_default,
            )
            for new_id, f in zip(ids, struct.fields)
        )
    )


def prune_columns(schema: Schema, selected_ids: set[int], *, select_full_types: bool = True) -> Schema:
    """The schema keeping the selected fields and the structs that lead to them.

    With ``select_full_types`` a selected struct, list or map keeps all of its children.
    """
    pruned = _prune_struct(schema.as_struct(), selected_ids, select_full_types)
    fields = pruned.fields if pruned is not None else ()
    kept_ids = set(index_by_id(StructType(*fields)))
    return Schema(
        *fields,
        schema_id=schema.schema_id,
        identifier_field_ids=[i for i in schema.identifier_field_ids if i in kept_ids],
    )


def _prune_type(field_type: IcebergType, selected: set[int], full: bool) -> IcebergType | None:
    if isinstance(field_type, StructType):
        return _prune_struct(field_type, selected, full)
    if isinstance(field_type, ListType):
        if field_type.element_id in selected and full:
            return field_type
        element = _prune_type(field_type.element_type, selected, full)
        if element is None:
            return field_type if field_type.element_id in selected else None
        return ListType(field_type.element_id, element, field_type.element_required)
    if isinstance(field_type, MapType):
        if field_type.value_id in selected and full:
            return field_type
        value = _prune_type(field_type.value_type, selected, full)
        if value is None:
            return field_type if field_type.value_id in selected or field_type.key_id in selected else None
        return MapType(
            field_type.key_id, field_type.key_type, field_type.value_id, value, field_type.value_required
        )
    return None


def _prune_struct(struct: StructType, selected: set[int], full: bool) -> StructType | None:
    kept: list[NestedField] = []
    for field in struct.fields:
        if field.field_id in selected and (full or field.field_type.is_primitive):
            kept.append(field)
            continue
        child = _prune_type(field.field_type, selected, full)
        if child is not None:
            kept.append(
                NestedField(
                    field.field_id,
                    field.name,
                    child,
                    field.required,
                    field.doc,
                    field.initial_default,
                    field.write_default,
                )
            )
        elif field.field_id in selected:
            kept.append(field)
    return StructType(*kept) if kept else None
