"""The results table of a campaign: one row per finished run, as Parquet or CSV, resumable.

Parquet: a folder ``runs.parquet/`` of part files, one per flush (Parquet files cannot be
appended to; a folder of parts is one dataset for pyarrow, pandas, polars, DuckDB, Spark).
CSV: one file ``runs.csv``, rows appended and flushed. Either way a finished run is on disk
as soon as it is flushed, and a campaign started again skips every run whose key (digest of
its settings and scenario, RunSpec.key) is already there: an interrupted campaign resumes,
a changed campaign file reruns what changed.
"""

from __future__ import annotations

import csv
import os
import time
from pathlib import Path
from typing import Any, Iterable

import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

__all__ = ["FORMATS", "ResultsTable"]

FORMATS = ("parquet", "csv")
# Text columns, typed so when reading a CSV back (an all-empty column would be read as nulls).
STRING_COLUMNS = ("key", "push_link", "terrain", "outcome", "failure_reason", "peak_torque_joint")


class ResultsTable:
    """The table of a campaign in folder `directory` (created), in `fmt` (FORMATS)."""

    def __init__(self, directory: str | os.PathLike, fmt: str = "parquet") -> None:
        if fmt not in FORMATS:
            raise ValueError(f"results format {fmt!r}; valid formats: {', '.join(FORMATS)}")
        self.directory = Path(directory)
        self.format = fmt
        self.path = self.directory / f"runs.{fmt}"
        self._columns: list[str] | None = None

    @classmethod
    def find(cls, directory: str | os.PathLike) -> "ResultsTable":
        """The table already in `directory` (Parquet preferred). FileNotFoundError when none."""
        directory = Path(directory)
        for fmt in FORMATS:
            if (directory / f"runs.{fmt}").exists():
                return cls(directory, fmt)
        raise FileNotFoundError(f"no results table (runs.parquet/ or runs.csv) in {directory}")

    def exists(self) -> bool:
        return self.path.exists()

    def read(self) -> pa.Table:
        """Every finished row, one per key (the last written), sorted by run_id."""
        if not self.exists():
            return pa.table({})
        if self.format == "parquet":
            parts = sorted(self.path.glob("part-*.parquet"))
            if not parts:
                return pa.table({})
            table = pa.concat_tables([pq.read_table(p) for p in parts], promote_options="permissive")
        else:
            options = pa_csv.ConvertOptions(strings_can_be_null=False,
                                            column_types={name: pa.string() for name in STRING_COLUMNS})
            table = pa_csv.read_csv(self.path, convert_options=options)
        if table.num_rows == 0:
            return table
        keys = table.column("key").to_pylist()
        last = {k: i for i, k in enumerate(keys)}
        table = table.take(sorted(last.values()))
        return table.sort_by("run_id")

    def finished_keys(self) -> set[str]:
        """Keys of the runs already in the table."""
        table = self.read()
        return set(table.column("key").to_pylist()) if table.num_rows else set()

    def append(self, rows: Iterable[dict[str, Any]]) -> None:
        """Write finished rows to disk now."""
        rows = list(rows)
        if not rows:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        if self.format == "parquet":
            self.path.mkdir(exist_ok=True)
            name = f"part-{time.time_ns():020d}-{os.getpid()}.parquet"
            tmp = self.path / f".{name}.tmp"
            pq.write_table(pa.Table.from_pylist(rows), tmp)
            tmp.rename(self.path / name)  # a part is whole or absent, even when killed mid-write
            return
        new_file = not self.path.exists() or self.path.stat().st_size == 0
        if self._columns is None:
            if new_file:
                self._columns = list(rows[0])
            else:
                with open(self.path, newline="", encoding="utf-8") as stream:
                    self._columns = next(csv.reader(stream))
        with open(self.path, "a", newline="", encoding="utf-8") as stream:
            writer = csv.DictWriter(stream, fieldnames=self._columns, extrasaction="ignore")
            if new_file:
                writer.writeheader()
            writer.writerows(rows)
            stream.flush()
            os.fsync(stream.fileno())
