"""Iceberg data types (spec: "Schemas and Data Types").

Types are immutable values: ``LongType() == LongType()``. Each type prints as its Iceberg
string form (``str(DecimalType(10, 2)) == "decimal(10, 2)"``) and ``parse_type`` reads that form
back, including nested forms such as ``"map<string, list<int>>"`` and
``"struct<a: int, b: string>"``. Nested types parsed from strings carry field id 0 for their
inner fields; schema construction assigns real ids.

Values are represented the same way everywhere in icefloe (partition tuples, bounds, literals):
boolean -> bool, int/long -> int, float/double -> float, decimal -> decimal.Decimal,
date -> int days since epoch, time -> int micros since midnight, timestamp(tz) -> int micros
since epoch, timestamp(tz)_ns -> int nanos since epoch, string -> str, uuid -> uuid.UUID,
fixed/binary -> bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from icefloe.errors import ValidationError

__all__ = [
    "BinaryType",
    "BooleanType",
    "DateType",
    "DecimalType",
    "DoubleType",
    "FixedType",
    "FloatType",
    "IcebergType",
    "IntegerType",
    "ListType",
    "LongType",
    "MapType",
    "NestedField",
    "NestedType",
    "PrimitiveType",
    "StringType",
    "StructType",
    "TimeType",
    "TimestampNanoType",
    "TimestampType",
    "TimestamptzNanoType",
    "TimestamptzType",
    "UUIDType",
    "UnknownType",
    "VariantType",
    "parse_type",
    "to_type",
]


class IcebergType:
    """Base of every Iceberg type."""

    __slots__ = ()

    @property
    def is_primitive(self) -> bool:
        return isinstance(self, PrimitiveType)

    @property
    def is_nested(self) -> bool:
        return isinstance(self, NestedType)

    @property
    def is_struct(self) -> bool:
        return isinstance(self, StructType)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()" if self.is_primitive else super().__repr__()


class PrimitiveType(IcebergType):
    """A primitive type; equal to every other instance of its class (parameters aside)."""

    __slots__ = ()
    _name: ClassVar[str] = ""
    #: The first format version that allows this type.
    min_format_version: ClassVar[int] = 1

    def __str__(self) -> str:
        return self._name

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self))


class BooleanType(PrimitiveType):
    __slots__ = ()
    _name = "boolean"


class IntegerType(PrimitiveType):
    __slots__ = ()
    _name = "int"
    MIN: ClassVar[int] = -(2**31)
    MAX: ClassVar[int] = 2**31 - 1


class LongType(PrimitiveType):
    __slots__ = ()
    _name = "long"
    MIN: ClassVar[int] = -(2**63)
    MAX: ClassVar[int] = 2**63 - 1


class FloatType(PrimitiveType):
    __slots__ = ()
    _name = "float"


class DoubleType(PrimitiveType):
    __slots__ = ()
    _name = "double"


class DateType(PrimitiveType):
    __slots__ = ()
    _name = "date"


class TimeType(PrimitiveType):
    __slots__ = ()
    _name = "time"


class TimestampType(PrimitiveType):
    __slots__ = ()
    _name = "timestamp"


class TimestamptzType(PrimitiveType):
    __slots__ = ()
    _name = "timestamptz"


class TimestampNanoType(PrimitiveType):
    __slots__ = ()
    _name = "timestamp_ns"
    min_format_version = 3


class TimestamptzNanoType(PrimitiveType):
    __slots__ = ()
    _name = "timestamptz_ns"
    min_format_version = 3


class StringType(PrimitiveType):
    __slots__ = ()
    _name = "string"


class UUIDType(PrimitiveType):
    __slots__ = ()
    _name = "uuid"


class BinaryType(PrimitiveType):
    __slots__ = ()
    _name = "binary"


class UnknownType(PrimitiveType):
    """v3 ``unknown``: always optional, always null, never stored in data files."""

    __slots__ = ()
    _name = "unknown"
    min_format_version = 3


class VariantType(PrimitiveType):
    """v3 ``variant``. Parsed and carried in metadata; icefloe does not read or write its values."""

    __slots__ = ()
    _name = "variant"
    min_format_version = 3


class FixedType(PrimitiveType):
    __slots__ = ("length",)
    length: int

    def __init__(self, length: int):
        if not isinstance(length, int) or length <= 0:
            raise ValidationError(f"fixed length must be a positive integer, not {length!r}")
        object.__setattr__(self, "length", length)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("FixedType is immutable")

    def __str__(self) -> str:
        return f"fixed[{self.length}]"

    def __repr__(self) -> str:
        return f"FixedType({self.length})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FixedType) and other.length == self.length

    def __hash__(self) -> int:
        return hash(("fixed", self.length))

    def __reduce__(self) -> tuple[Any, ...]:
        return (FixedType, (self.length,))


class DecimalType(PrimitiveType):
    __slots__ = ("precision", "scale")
    precision: int
    scale: int
    MAX_PRECISION: ClassVar[int] = 38

    def __init__(self, precision: int, scale: int):
        if not isinstance(precision, int) or not 1 <= precision <= self.MAX_PRECISION:
            raise ValidationError(f"decimal precision must be 1..38, not {precision!r}")
        if not isinstance(scale, int):
            raise ValidationError(f"decimal scale must be an integer, not {scale!r}")
        object.__setattr__(self, "precision", precision)
        object.__setattr__(self, "scale", scale)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("DecimalType is immutable")

    def __str__(self) -> str:
        return f"decimal({self.precision}, {self.scale})"

    def __repr__(self) -> str:
        return f"DecimalType({self.precision}, {self.scale})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DecimalType) and (other.precision, other.scale) == (
            self.precision,
            self.scale,
        )

    def __hash__(self) -> int:
        return hash(("decimal", self.precision, self.scale))

    def __reduce__(self) -> tuple[Any, ...]:
        return (DecimalType, (self.precision, self.scale))


class NestedType(IcebergType):
    __slots__ = ()

    @property
    def fields(self) -> tuple[NestedField, ...]:
        """The child fields: struct fields, the list element, or the map key and value."""
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class NestedField:
    """A named, numbered field of a struct (or the element / key / value of a list or map).

    ``initial_default`` is the value readers use for rows written before the field existed;
    ``write_default`` the value writers use when a row has none (both v3). Values use the
    representation described in this module's docstring.
    """

    field_id: int
    name: str
    field_type: IcebergType
    required: bool = False
    doc: str | None = None
    initial_default: Any = None
    write_default: Any = None

    def __post_init__(self) -> None:
        if isinstance(self.field_type, str):
            object.__setattr__(self, "field_type", parse_type(self.field_type))
        if not isinstance(self.field_type, IcebergType):
            raise ValidationError(f"field '{self.name}': not an Iceberg type: {self.field_type!r}")

    @property
    def optional(self) -> bool:
        return not self.required

    def __str__(self) -> str:
        req = "required" if self.required else "optional"
        doc = f" ({self.doc})" if self.doc else ""
        return f"{self.field_id}: {self.name}: {req} {self.field_type}{doc}"


class StructType(NestedType):
    """An ordered tuple of named fields."""

    __slots__ = ("_by_id", "_by_name", "_fields")
    _fields: tuple[NestedField, ...]
    _by_id: dict[int, NestedField] | None
    _by_name: dict[str, NestedField] | None

    def __init__(self, *fields: NestedField):
        if len(fields) == 1 and isinstance(fields[0], (list, tuple)):
            fields = tuple(fields[0])
        object.__setattr__(self, "_fields", tuple(fields))
        object.__setattr__(self, "_by_id", None)
        object.__setattr__(self, "_by_name", None)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("StructType is immutable")

    @property
    def fields(self) -> tuple[NestedField, ...]:
        return self._fields

    def field(self, field_id: int) -> NestedField | None:
        """The direct child with this id, or None."""
        by_id = self._by_id
        if by_id is None:
            by_id = {f.field_id: f for f in self._fields}
            object.__setattr__(self, "_by_id", by_id)
        return by_id.get(field_id)

    def field_by_name(self, name: str, case_sensitive: bool = True) -> NestedField | None:
        """The direct child with this name, or None."""
        if case_sensitive:
            by_name = self._by_name
            if by_name is None:
                by_name = {f.name: f for f in self._fields}
                object.__setattr__(self, "_by_name", by_name)
            return by_name.get(name)
        lowered = name.lower()
        return next((f for f in self._fields if f.name.lower() == lowered), None)

    def __iter__(self) -> Any:
        return iter(self._fields)

    def __len__(self) -> int:
        return len(self._fields)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StructType) and other._fields == self._fields

    def __hash__(self) -> int:
        return hash(("struct", self._fields))

    def __str__(self) -> str:
        inner = ", ".join(f"{f.name}: {f.field_type}" for f in self._fields)
        return f"struct<{inner}>"

    def __repr__(self) -> str:
        return f"StructType({', '.join(repr(f) for f in self._fields)})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (StructType, self._fields)


@dataclass(frozen=True, slots=True)
class ListType(NestedType):
    element_id: int
    element_type: IcebergType
    element_required: bool = True

    def __post_init__(self) -> None:
        if isinstance(self.element_type, str):
            object.__setattr__(self, "element_type", parse_type(self.element_type))

    @property
    def element_field(self) -> NestedField:
        return NestedField(self.element_id, "element", self.element_type, self.element_required)

    @property
    def fields(self) -> tuple[NestedField, ...]:
        return (self.element_field,)

    def __str__(self) -> str:
        return f"list<{self.element_type}>"


@dataclass(frozen=True, slots=True)
class MapType(NestedType):
    key_id: int
    key_type: IcebergType
    value_id: int
    value_type: IcebergType
    value_required: bool = True

    def __post_init__(self) -> None:
        if isinstance(self.key_type, str):
            object.__setattr__(self, "key_type", parse_type(self.key_type))
        if isinstance(self.value_type, str):
            object.__setattr__(self, "value_type", parse_type(self.value_type))

    @property
    def key_field(self) -> NestedField:
        return NestedField(self.key_id, "key", self.key_type, True)

    @property
    def value_field(self) -> NestedField:
        return NestedField(self.value_id, "value", self.value_type, self.value_required)

    @property
    def fields(self) -> tuple[NestedField, ...]:
        return (self.key_field, self.value_field)

    def __str__(self) -> str:
        return f"map<{self.key_type}, {self.value_type}>"


_PRIMITIVES: dict[str, type[PrimitiveType]] = {
    cls._name: cls
    for cls in (
        BooleanType,
        IntegerType,
        LongType,
        FloatType,
        DoubleType,
        DateType,
        TimeType,
        TimestampType,
        TimestamptzType,
        TimestampNanoType,
        TimestamptzNanoType,
        StringType,
        UUIDType,
        BinaryType,
        UnknownType,
        VariantType,
    )
}
# Common spellings users type, mapped to the Iceberg name.
_ALIASES = {
    "integer": "int",
    "bigint": "long",
    "bool": "boolean",
    "real": "float",
    "float64": "double",
    "float32": "float",
    "int32": "int",
    "int64": "long",
    "varchar": "string",
    "text": "string",
    "bytes": "binary",
    "timestamp_ntz": "timestamp",
    "timestamp_ltz": "timestamptz",
}


def to_type(value: IcebergType | str) -> IcebergType:
    """Accept a type or its string form."""
    if isinstance(value, IcebergType):
        return value
    if isinstance(value, str):
        return parse_type(value)
    raise ValidationError(f"not an Iceberg type: {value!r}")


def parse_type(text: str) -> IcebergType:
    """Parse an Iceberg type string: ``"long"``, ``"decimal(10, 2)"``, ``"fixed[16]"``,
    ``"list<string>"``, ``"map<string, int>"``, ``"struct<a: int, b: list<long>>"``.

    Inner fields of nested types get id 0 and are optional (list elements and map values too);
    the schema they are added to assigns ids.

    Raises:
        ValidationError: naming the part of the string that is not a type.
    """
    parser = _TypeParser(text)
    result = parser.parse()
    parser.expect_end()
    return result


class _TypeParser:
    def __init__(self, text: str):
        self.text = text
        self.pos = 0

    def error(self, what: str) -> ValidationError:
        return ValidationError(f"invalid type string {self.text!r}: {what} at position {self.pos}")

    def skip_ws(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self) -> str:
        self.skip_ws()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def eat(self, char: str) -> None:
        if self.peek() != char:
            raise self.error(f"expected '{char}'")
        self.pos += 1

    def word(self) -> str:
        self.skip_ws()
        start = self.pos
        while self.pos < len(self.text) and (self.text[self.pos].isalnum() or self.text[self.pos] in "_"):
            self.pos += 1
        if start == self.pos:
            raise self.error("expected a type name")
        return self.text[start : self.pos]

    def expect_end(self) -> None:
        self.skip_ws()
        if self.pos != len(self.text):
            raise self.error("unexpected trailing text")

    def parse(self) -> IcebergType:
        name = self.word().lower()
        name = _ALIASES.get(name, name)
        if name in ("decimal", "numeric"):
            self.eat("(")
            precision = int(self.word())
            self.eat(",")
            scale = int(self.word())
            self.eat(")")
            return DecimalType(precision, scale)
        if name == "fixed":
            self.eat("[")
            length = int(self.word())
            self.eat("]")
            return FixedType(length)
        if name in ("list", "array"):
            self.eat("<")
            element = self.parse()
            self.eat(">")
            return ListType(0, element, element_required=False)
        if name == "map":
            self.eat("<")
            key = self.parse()
            self.eat(",")
            value = self.parse()
            self.eat(">")
            return MapType(0, key, 0, value, value_required=False)
        if name == "struct":
            self.eat("<")
            fields: list[NestedField] = []
            while self.peek() != ">":
                if fields:
                    self.eat(",")
                field_name = self.word()
                self.eat(":")
                fields.append(NestedField(0, field_name, self.parse(), required=False))
            self.eat(">")
            return StructType(*fields)
        cls = _PRIMITIVES.get(name)
        if cls is None:
            raise self.error(f"unknown type '{name}'")
        return cls()


EMPTY_STRUCT = StructType()
