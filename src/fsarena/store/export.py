"""Export every table of a store to Parquet, one file per table, for DuckDB or pandas.

e.g. `duckdb -c "SELECT * FROM read_parquet('DIR/values.parquet')"`. Column types
follow the store's; an empty table is written with its columns and no rows.
"""

from __future__ import annotations

from pathlib import Path

from fsarena.store.db import Store
from fsarena.store.schema import TABLES


def export_parquet(store: Store, directory: Path) -> list[Path]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for table in (*TABLES, "schema_version"):
        rows = store.query(f'SELECT * FROM "{table}" ORDER BY 1, 2' if table in ("runs", "values")
                           else f'SELECT * FROM "{table}" ORDER BY 1')  # fmt: skip
        columns = {c: [r[i] for r in rows] for i, c in enumerate(store.columns)}
        path = directory / f"{table}.parquet"
        tmp = path.with_name(f".{path.name}.tmp")
        pq.write_table(pa.table(columns), tmp)
        tmp.replace(path)  # never a half-written file under the final name
        written.append(path)
    return written
