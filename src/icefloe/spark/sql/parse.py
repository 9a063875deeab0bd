"""Parsing Iceberg's Spark SQL: sqlglot's Spark dialect, extended with Iceberg's statements.

sqlglot parses Spark SQL (queries, INSERT, MERGE, CREATE TABLE, most of ALTER TABLE) but not
the statements Iceberg's Spark extensions add; it hands those back as an opaque ``Command``.
:class:`IcebergSpark` teaches its parser Iceberg's grammar (``IcebergSqlExtensions.g4``):

- ``ALTER TABLE t ADD PARTITION FIELD bucket(16, id) [AS name]``, ``DROP PARTITION FIELD f``,
  ``REPLACE PARTITION FIELD f WITH g [AS name]``;
- ``ALTER TABLE t WRITE [LOCALLY] ORDERED BY ...``, ``WRITE DISTRIBUTED BY PARTITION
  [LOCALLY ORDERED BY ...]``, ``WRITE UNORDERED``;
- ``ALTER TABLE t SET IDENTIFIER FIELDS a, b`` / ``DROP IDENTIFIER FIELDS a``;
- ``ALTER TABLE t CREATE [OR REPLACE] BRANCH [IF NOT EXISTS] b [AS OF VERSION n]
  [RETAIN n DAYS] [WITH SNAPSHOT RETENTION [n SNAPSHOTS] [n DAYS]]``, the same for TAG,
  ``REPLACE BRANCH|TAG``, ``DROP BRANCH|TAG [IF EXISTS]``;
- ``CALL cat.system.proc(name => value, ...)``; ``REPLACE TABLE ... AS SELECT``;
- ``SHOW NAMESPACES|DATABASES [IN ns]``, ``SHOW TABLES [IN ns]``, ``SHOW TBLPROPERTIES t [(key)]``.
"""

from __future__ import annotations

import logging
from typing import Any, cast

from sqlglot import TokenType, exp
from sqlglot.dialects.spark import Spark
from sqlglot.trie import new_trie

__all__ = [
    "BranchOrTag",
    "Call",
    "IcebergSpark",
    "IdentifierFields",
    "MoveColumn",
    "PartitionField",
    "ShowStatement",
    "UnsetProperties",
    "WriteOrder",
    "parse",
]


class PartitionField(exp.Expression):
    """ADD / DROP / REPLACE PARTITION FIELD: ``action``, the term ``this``, ``to`` (REPLACE's
    new term) and ``name`` (AS name)."""

    arg_types = {"action": True, "this": True, "to": False, "name": False}


class WriteOrder(exp.Expression):
    """WRITE ...: ``ordered`` sort terms (Ordered), ``locally``, ``distributed`` (by partition),
    ``unordered``."""

    arg_types = {"expressions": False, "locally": False, "distributed": False, "unordered": False}


class IdentifierFields(exp.Expression):
    """SET / DROP IDENTIFIER FIELDS: ``action`` and the field names."""

    arg_types = {"action": True, "expressions": True}


class BranchOrTag(exp.Expression):
    """CREATE / REPLACE / DROP BRANCH or TAG with its options (times in milliseconds)."""

    arg_types = {
        "action": True,  # create | replace | create_or_replace | drop
        "kind": True,  # branch | tag
        "this": True,
        "exists": False,  # IF [NOT] EXISTS
        "snapshot_id": False,
        "max_ref_age_ms": False,
        "min_snapshots_to_keep": False,
        "max_snapshot_age_ms": False,
    }


class Call(exp.Expression):
    """CALL cat.system.proc(args): ``this`` the name parts, ``expressions`` the arguments
    (Kwarg for ``name => value``)."""

    arg_types = {"this": True, "expressions": False}


class MoveColumn(exp.Expression):
    """ALTER COLUMN c FIRST / AFTER other."""

    arg_types = {"this": True, "first": False, "after": False}


class UnsetProperties(exp.Expression):
    """UNSET TBLPROPERTIES [IF EXISTS] ('k', ...)."""

    arg_types = {"expressions": True, "exists": False}


class ShowStatement(exp.Expression):
    """SHOW NAMESPACES / TABLES / TBLPROPERTIES: ``kind``, ``this`` (the namespace or table),
    ``key`` (one property)."""

    arg_types = {"kind": True, "this": False, "key": False}


_TIME_UNITS_MS = {"DAYS": 86_400_000, "HOURS": 3_600_000, "MINUTES": 60_000}


class IcebergSpark(Spark):
    """Spark SQL with Iceberg's SQL extensions."""

    class Tokenizer(Spark.Tokenizer):
        KEYWORDS = {**Spark.Tokenizer.KEYWORDS, "CALL": TokenType.VAR}
        COMMANDS = Spark.Tokenizer.COMMANDS - {TokenType.SHOW}

    class Parser(Spark.Parser):  # type: ignore[misc,valid-type]
        ALTER_PARSERS = {
            **Spark.Parser.ALTER_PARSERS,
            "ADD": lambda self: self._iceberg_add(),
            "DROP": lambda self: self._iceberg_drop(),
            "REPLACE": lambda self: self._iceberg_replace(),
            "WRITE": lambda self: self._iceberg_write(),
            "SET": lambda self: self._iceberg_set(),
            "CREATE": lambda self: self._iceberg_create_ref(),
            "ALTER": lambda self: self._iceberg_alter(),
            "UNSET": lambda self: self._iceberg_unset(),
        }
        # Spark's temporalClause: FOR? (SYSTEM_VERSION | VERSION) AS OF, FOR? (SYSTEM_TIME | TIMESTAMP) AS OF
        VERSION_PHRASES = {
            **Spark.Parser.VERSION_PHRASES,
            ("FOR", "SYSTEM_VERSION"): "VERSION",
            ("SYSTEM_VERSION", "AS", "OF"): "VERSION",
            ("SYSTEM_TIME", "AS", "OF"): "TIMESTAMP",
        }
        STATEMENT_PARSERS = {
            **Spark.Parser.STATEMENT_PARSERS,
            TokenType.SHOW: lambda self: self._parse_show(),
            TokenType.REPLACE: lambda self: self._parse_create(),  # REPLACE TABLE ... AS SELECT
        }
        SHOW_PARSERS = {
            "NAMESPACES": lambda self: self._iceberg_show("namespaces"),
            "DATABASES": lambda self: self._iceberg_show("namespaces"),
            "SCHEMAS": lambda self: self._iceberg_show("namespaces"),
            "TABLES": lambda self: self._iceberg_show("tables"),
            "TBLPROPERTIES": lambda self: self._iceberg_show("tblproperties"),
        }

        SHOW_TRIE = new_trie(key.split(" ") for key in SHOW_PARSERS)

        def _parse_statement(self) -> Any:
            if self._curr and self._curr.token_type == TokenType.VAR and self._curr.text.upper() == "CALL":
                self._advance()
                return self._iceberg_call()
            return super()._parse_statement()

        # -- ALTER TABLE extensions --------------------------------------------------------

        def _iceberg_add(self) -> Any:
            if self._match_text_seq("PARTITION", "FIELD"):
                term = self._parse_bitwise()
                name = self._parse_id_var() if self._match(TokenType.ALIAS) else None
                return self.expression(PartitionField(action="add", this=term, name=name))
            return self._parse_alter_table_add()

        def _iceberg_drop(self) -> Any:
            if self._match_text_seq("PARTITION", "FIELD"):
                return self.expression(PartitionField(action="drop", this=self._parse_bitwise()))
            if self._match_text_seq("IDENTIFIER", "FIELDS"):
                return self._iceberg_identifier_fields("drop")
            for kind in ("BRANCH", "TAG"):
                if self._match_text_seq(kind):
                    exists = self._match_text_seq("IF", "EXISTS")
                    return self.expression(
                        BranchOrTag(
                            action="drop", kind=kind.lower(), this=self._parse_id_var(), exists=exists
                        )
                    )
            return self._parse_alter_table_drop()

        def _iceberg_replace(self) -> Any:
            if self._match_text_seq("PARTITION", "FIELD"):
                term = self._parse_bitwise()
                self._match_text_seq("WITH")
                to = self._parse_bitwise()
                name = self._parse_id_var() if self._match(TokenType.ALIAS) else None
                return self.expression(PartitionField(action="replace", this=term, to=to, name=name))
            return self._iceberg_ref("replace")

        def _iceberg_create_ref(self) -> Any:
            if self._match_text_seq("OR", "REPLACE"):
                return self._iceberg_ref("create_or_replace")
            return self._iceberg_ref("create")

        def _iceberg_ref(self, action: str) -> Any:
            kind = (
                "branch" if self._match_text_seq("BRANCH") else "tag" if self._match_text_seq("TAG") else None
            )
            if kind is None:
                self.raise_error("expected BRANCH or TAG")
            exists = self._match_text_seq("IF", "NOT", "EXISTS")
            args: dict[str, Any] = {
                "action": action,
                "kind": kind,
                "this": self._parse_id_var(),
                "exists": exists,
            }
            if self._match_text_seq("AS", "OF", "VERSION"):
                args["snapshot_id"] = int(self._parse_number().name)
            if self._match_text_seq("RETAIN"):
                args["max_ref_age_ms"] = self._iceberg_duration()
            if self._match_text_seq("WITH", "SNAPSHOT", "RETENTION"):
                while self._curr and self._curr.token_type == TokenType.NUMBER:
                    number = int(self._parse_number().name)
                    if self._match_text_seq("SNAPSHOTS"):
                        args["min_snapshots_to_keep"] = number
                    else:
                        args["max_snapshot_age_ms"] = number * self._iceberg_unit()
            return self.expression(BranchOrTag(**args))

        def _iceberg_duration(self) -> int:
            number = int(self._parse_number().name)
            return number * self._iceberg_unit()

        def _iceberg_unit(self) -> int:
            unit = self._curr.text.upper() if self._curr else ""
            if unit not in _TIME_UNITS_MS:
                self.raise_error("expected DAYS, HOURS or MINUTES")
            self._advance()
            return _TIME_UNITS_MS[unit]

        def _iceberg_write(self) -> Any:
            if self._match_text_seq("UNORDERED"):
                return self.expression(WriteOrder(unordered=True))
            distributed = self._match_text_seq("DISTRIBUTED", "BY", "PARTITION")
            locally = self._match_text_seq("LOCALLY")
            terms: list[Any] = []
            if self._match_text_seq("ORDERED", "BY"):
                terms = self._parse_csv(self._parse_ordered)
            return self.expression(WriteOrder(expressions=terms, locally=locally, distributed=distributed))

        def _iceberg_alter(self) -> Any:
            index = self._index
            self._match(TokenType.COLUMN)
            column = self._parse_column()
            if self._match_text_seq("FIRST"):
                return self.expression(MoveColumn(this=column, first=True))
            if self._match_text_seq("AFTER"):
                return self.expression(MoveColumn(this=column, after=self._parse_column()))
            self._retreat(index)
            return self._parse_alter_table_alter()

        def _iceberg_unset(self) -> Any:
            self._match_text_seq("TBLPROPERTIES")
            exists = self._match_text_seq("IF", "EXISTS")
            self._match_l_paren()
            keys = self._parse_csv(self._parse_primary)
            self._match_r_paren()
            return self.expression(UnsetProperties(expressions=keys, exists=exists))

        def _iceberg_set(self) -> Any:
            if self._match_text_seq("IDENTIFIER", "FIELDS"):
                return self._iceberg_identifier_fields("set")
            return self._parse_alter_table_set()

        def _iceberg_identifier_fields(self, action: str) -> Any:
            fields = self._parse_csv(self._parse_column)
            return self.expression(IdentifierFields(action=action, expressions=fields))

        # -- CALL and SHOW ----------------------------------------------------------------

        def _iceberg_call(self) -> Any:
            parts = [self._parse_id_var(any_token=True)]
            while self._match(TokenType.DOT):
                parts.append(self._parse_id_var(any_token=True))
            self._match_l_paren()
            args = (
                [] if self._match(TokenType.R_PAREN, advance=False) else self._parse_csv(self._parse_lambda)
            )
            self._match_r_paren()
            return self.expression(Call(this=exp.Tuple(expressions=parts), expressions=args))

        def _iceberg_show(self, kind: str) -> Any:
            target = None
            key = None
            if kind == "tblproperties":
                target = self._parse_table_parts()
                last = target.this if isinstance(target, exp.Table) else None
                if isinstance(last, exp.Anonymous) and len(last.expressions) == 1:
                    # sqlglot reads ``t ('key')`` as a call of a function ``t``
                    key = last.expressions[0]
                    target.set("this", exp.to_identifier(last.name))
                elif self._match(TokenType.L_PAREN):
                    key = self._parse_primary() or self._parse_var(any_token=True)
                    self._match_r_paren()
            elif self._match_set((TokenType.IN, TokenType.FROM)):
                target = self._parse_table_parts()
            return self.expression(ShowStatement(kind=kind, this=target, key=key))


_DIALECT = IcebergSpark()


def parse(statement: str) -> exp.Expression:
    """One statement as a sqlglot tree (a ``Command`` where even the extended dialect gives up)."""
    logging.getLogger("sqlglot").setLevel(logging.ERROR)  # its "falling back to Command" notes
    parsed = _DIALECT.parse(statement)
    statements = [p for p in parsed if p is not None]
    if len(statements) != 1:
        raise ValueError(f"expected one SQL statement, found {len(statements)}")
    return cast(exp.Expression, statements[0])
