"""Row filters: build, parse, bind and evaluate Iceberg expressions.

Build filters with the functions here (``and_(equal("country", "China"), greater_than("amount",
10))``) or parse SQL text (``parse("country = 'China' AND amount > 10")``); bind them to a
schema with :func:`bind`. Semantics are SQL's: see :mod:`icefloe.expressions.model`.
"""

from icefloe.expressions.binder import bind, bind_reference, reference_for_id
from icefloe.expressions.builders import (
    equal,
    greater_than,
    greater_than_or_equal,
    is_in,
    is_nan,
    is_null,
    less_than,
    less_than_or_equal,
    not_equal,
    not_in,
    not_nan,
    not_null,
    not_starts_with,
    predicate,
    ref,
    starts_with,
)
from icefloe.expressions.evaluator import Evaluator, evaluate
from icefloe.expressions.literals import Literal, literal
from icefloe.expressions.manifest_evaluator import ManifestEvaluator
from icefloe.expressions.metrics import InclusiveMetricsEvaluator, StrictMetricsEvaluator
from icefloe.expressions.model import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    BooleanExpression,
    BoundPredicate,
    BoundReference,
    Expression,
    Not,
    Operation,
    Or,
    Reference,
    UnboundPredicate,
    always_false,
    always_true,
    and_,
    not_,
    or_,
)
from icefloe.expressions.parser import parse
from icefloe.expressions.projection import inclusive_projection, strict_projection
from icefloe.expressions.residual import ResidualEvaluator
from icefloe.expressions.rewrite import referenced_field_ids, rewrite_not, unbind

__all__ = [
    "AlwaysFalse",
    "AlwaysTrue",
    "And",
    "BooleanExpression",
    "BoundPredicate",
    "BoundReference",
    "Evaluator",
    "Expression",
    "InclusiveMetricsEvaluator",
    "Literal",
    "ManifestEvaluator",
    "Not",
    "Operation",
    "Or",
    "Reference",
    "ResidualEvaluator",
    "StrictMetricsEvaluator",
    "UnboundPredicate",
    "always_false",
    "always_true",
    "and_",
    "bind",
    "bind_reference",
    "equal",
    "evaluate",
    "greater_than",
    "greater_than_or_equal",
    "inclusive_projection",
    "is_in",
    "is_nan",
    "is_null",
    "less_than",
    "less_than_or_equal",
    "literal",
    "not_",
    "not_equal",
    "not_in",
    "not_nan",
    "not_null",
    "not_starts_with",
    "or_",
    "parse",
    "predicate",
    "ref",
    "reference_for_id",
    "referenced_field_ids",
    "rewrite_not",
    "starts_with",
    "strict_projection",
    "unbind",
]
