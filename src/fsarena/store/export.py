"""Export every table of a store to Parquet, one file per table, for DuckDB or pandas.

e.g. `duckdb -c "SELECT * FROM read_parquet('DIR/values.parquet')"`. Column types
follow the store's; an empty table is written with its columns and no rows.
"""

from __future__ import annotations

from pathlib import Path

from fsarena.session.outputs import require_free, write_file
from fsarena.store.db import Store
from fsarena.store.schema import TABLES


def export_parquet(store: Store, directory: Path) -> list[Path]:
    """Every table as DIRECTORY/TABLE.parquet, each written whole, never over a file
    fsarena did not write (session.outputs: an earlier export's files are replaced)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    names = [*TABLES, "schema_version"]
    for table in names:  # all checked before any is written
        require_free(directory / f"{table}.parquet", "Parquet export", "give another --parquet")
    written = []
    for table in names:
        rows = store.query(f'SELECT * FROM "{table}" ORDER BY 1, 2' if table in ("runs", "values")
                           else f'SELECT * FROM "{table}" ORDER BY 1')  # fmt: skip
        columns = {c: [r[i] for r in rows] for i, c in enumerate(store.columns)}
        path = directory / f"{table}.parquet"
        sink = pa.BufferOutputStream()
        pq.write_table(pa.table(columns), sink)
        write_file(path, sink.getvalue().to_pybytes(), "Parquet export")
        written.append(path)
    return written
