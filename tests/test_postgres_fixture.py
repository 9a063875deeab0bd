"""The ``postgres_url`` fixture gives a reachable, writable database."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

pytestmark = pytest.mark.postgres


def test_postgres_answers_select_1(postgres_url: str) -> None:
    assert postgres_url.startswith("postgresql+psycopg://")
    engine = sa.create_engine(postgres_url)
    try:
        with engine.begin() as conn:
            assert conn.execute(sa.text("SELECT 1")).scalar_one() == 1
            conn.execute(sa.text("CREATE TABLE probe (id int PRIMARY KEY)"))
            conn.execute(sa.text("INSERT INTO probe VALUES (1)"))
        with engine.connect() as conn:
            assert conn.execute(sa.text("SELECT count(*) FROM probe")).scalar_one() == 1
            conn.execute(sa.text("DROP TABLE probe"))
            conn.commit()
    finally:
        engine.dispose()
