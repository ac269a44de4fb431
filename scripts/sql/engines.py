#!/usr/bin/env python3
"""Runs the same SQL on a directory of `hprof export --format parquet` exports with Apache Spark (PyPI
pyspark, local mode) or DuckDB (PyPI duckdb), as independent readers of the Parquet files.

    python3 scripts/sql/engines.py spark|duckdb EXPORTS [SQL]

EXPORTS holds one export per dump, named `dump=NAME` (Hive partitioning): each table is the union of
every dump's, with a `dump` column; or EXPORTS is one export's directory. Without SQL, prints as JSON each
dump's class histogram and its 20 biggest objects at the top of the dominator tree (what `hprof histo` and
`hprof dominators` show); with SQL, prints its rows as a JSON array of objects. The packages come from
PYTHONPATH (`make pysql` installs them in target/pysql).
"""
import json
import os
import sys

TABLES = ["dump", "objects", "references", "classes", "roots", "stacks", "samples", "sites", "monitor_time", "threads"]

HISTO = """
SELECT dump, class, count(*) AS instances, sum(shallow) AS shallow_bytes
FROM objects GROUP BY dump, class_id, class
"""

TOP = """
SELECT dump, id, retained FROM (
  SELECT dump, id, retained, row_number() OVER (PARTITION BY dump ORDER BY retained DESC, id) AS r
  FROM objects WHERE dominator IS NULL) t
WHERE r <= 20
"""


def paths(base, table):
    """The files of a table: one export's, or every `dump=NAME` export's below base."""
    if os.path.isfile(os.path.join(base, "dump.parquet")):
        return os.path.join(base, f"{table}.parquet"), False
    return f"{base}/dump=*/{table}.parquet", True


def spark_session(base):
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("hprof-sql")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
        .config("spark.driver.memory", "1g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    for t in TABLES:
        path, _ = paths(base, t)
        spark.read.option("basePath", base).parquet(path).createOrReplaceTempView(t)
    return lambda sql: [r.asDict() for r in spark.sql(sql).collect()]


def duckdb_session(base):
    import duckdb

    con = duckdb.connect()
    for t in TABLES:
        path, hive = paths(base, t)
        options = ", hive_partitioning = true, hive_types_autocast = false" if hive else ""
        con.execute(f"CREATE VIEW \"{t}\" AS SELECT * FROM read_parquet('{path}'{options})")

    def run(sql):
        cur = con.execute(sql)
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]

    return run


def main():
    engine, base = sys.argv[1], os.path.abspath(sys.argv[2])
    run = spark_session(base) if engine == "spark" else duckdb_session(base)
    if len(sys.argv) > 3:
        print(json.dumps(run(sys.argv[3]), default=str))
        return
    out = {"histo": {}, "top": {}}
    for r in run(HISTO):
        out["histo"].setdefault(r["dump"], []).append([r["class"], int(r["instances"]), int(r["shallow_bytes"])])
    for r in run(TOP):
        out["top"].setdefault(r["dump"], []).append([int(r["id"]), int(r["retained"])])
    print(json.dumps(out))


if __name__ == "__main__":
    main()
