#!/usr/bin/python3
"""Drive psycopg 3 through a PostgreSQL connection and print what happened.

Usage: psycopg_client.py CONNINFO PREFIX

CONNINFO is a libpq connection string (the server itself or lethe-proxy in
front of it); PREFIX names this run's tables and notification channel
(PREFIX_items, PREFIX_copy, ...), which are dropped first and last. The
output is one JSON document that depends only on the database, not on the
connection, so a run through the proxy must print exactly what a direct run
prints (test/integration/psycopg_test.go compares them).

Exercised: server-side parameter binding, pipeline mode (executemany and an
error inside a pipeline), transactions, COPY FROM STDIN (text, raw blocks and
binary) and COPY TO STDOUT (text and binary), a pgvector column, prepared
statements, binary results and LISTEN/NOTIFY.
"""

import datetime
import decimal
import hashlib
import json
import signal
import sys
import uuid

import psycopg
from psycopg import sql
from psycopg.types.json import Jsonb

WATCHDOG_SECONDS = 90


def enc(v):
    """A JSON-friendly, type-revealing form of a value psycopg returned."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return {"float": repr(v)}
    if isinstance(v, decimal.Decimal):
        return {"decimal": str(v)}
    if isinstance(v, (bytes, bytearray, memoryview)):
        return {"bytes": bytes(v).hex()}
    if isinstance(v, (datetime.datetime, datetime.date, datetime.time)):
        return {type(v).__name__: v.isoformat()}
    if isinstance(v, datetime.timedelta):
        return {"timedelta": str(v)}
    if isinstance(v, uuid.UUID):
        return {"uuid": str(v)}
    if isinstance(v, (list, tuple)):
        return [enc(x) for x in v]
    if isinstance(v, dict):
        return {"dict": {k: enc(x) for k, x in v.items()}}
    return {type(v).__name__: repr(v)}


def row(r):
    return None if r is None else [enc(x) for x in r]


def rows(rs):
    return [row(r) for r in rs]


def error(e):
    d = e.diag
    return {
        "class": type(e).__name__,
        "sqlstate": e.sqlstate,
        "message": d.message_primary,
        "detail": d.message_detail,
        "constraint": d.constraint_name,
        "table": d.table_name,
    }


def main():
    conninfo, prefix = sys.argv[1], sys.argv[2]
    signal.alarm(WATCHDOG_SECONDS)  # a hung client must not hang the test

    def ident(name):
        return sql.Identifier(f"{prefix}_{name}")

    items, copy_t, copy_b, vec = ident("items"), ident("copy"), ident("copyb"), ident("vec")
    channel = f"{prefix}_ch"
    out = {"psycopg": psycopg.__version__.split(".")[0]}

    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute("SET TimeZone = 'UTC'")
        for t in (items, copy_t, copy_b, vec):
            conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(t))

        # --- parameters (server-side binding: Parse/Bind with $n) ----------
        big = "ünïcødé-" * 150_000  # a Bind message of well over 1 MB
        r = conn.execute(
            "SELECT %s::int + 1, %s::text, %s::numeric * 2, %s::int IS NULL, %s, %b::bytea,"
            " length(%s), md5(%s)",
            (41, "héllo 'quoted' \"double\"", decimal.Decimal("1.25"), None, True,
             b"\x00\x01\xfe\xff", big, big),
        ).fetchone()
        out["params"] = row(r)
        out["params_implicit_types"] = row(conn.execute(
            "SELECT %s + %s, %s || %s, pg_typeof(%s)::text, pg_typeof(%s)::text",
            (2, 3, "a", "b", 7, 1.5)).fetchone())

        conn.execute(sql.SQL(
            "CREATE TABLE {} (id int PRIMARY KEY, name text NOT NULL, qty int)").format(items))

        # --- pipeline: executemany + select ---------------------------------
        ins = sql.SQL("INSERT INTO {} (id, name, qty) VALUES (%s, %s, %s)").format(items)
        with conn.pipeline() as p:
            many, sel = conn.cursor(), conn.cursor()
            many.executemany(ins, [(i, f"item-{i}", i * 2) for i in range(1, 201)])
            sel.execute(sql.SQL("SELECT count(*), sum(qty), max(name) FROM {}").format(items))
            p.sync()  # results of a pipeline arrive at a Sync
            out["pipeline"] = {"select": row(sel.fetchone()), "rowcount": many.rowcount}

        # --- an error inside a pipeline -------------------------------------
        caught = None
        try:
            with conn.pipeline():
                conn.execute(ins, (201, "before-error", 1))
                conn.execute(ins, (1, "duplicate", 1))  # unique violation
                conn.execute(ins, (202, "after-error", 1))  # never runs
        except psycopg.errors.UniqueViolation as e:
            caught = error(e)
        out["pipeline_error"] = {
            "error": caught,
            "status_after": conn.info.transaction_status.name,
            "rows_201_202": rows(conn.execute(
                sql.SQL("SELECT id, name FROM {} WHERE id > 200 ORDER BY id").format(items)
            ).fetchall()),
            "usable_after": row(conn.execute("SELECT 42, %s::text", ("still here",)).fetchone()),
        }
        # A pipeline that works after the failed one.
        with conn.pipeline():
            a = conn.execute("SELECT %s::int", (1,))
            b = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(items))
        out["pipeline_after_error"] = [row(a.fetchone()), row(b.fetchone())]

        # --- transactions ----------------------------------------------------
        class Rollback(Exception):
            pass

        try:
            with conn.transaction():
                conn.execute(ins, (300, "rolled back", 1))
                raise Rollback
        except Rollback:
            pass
        tx_error = None
        try:
            with conn.transaction():
                conn.execute(ins, (301, "rolled back too", 1))
                conn.execute("SELECT 1/0")
        except psycopg.errors.DivisionByZero as e:
            tx_error = error(e)
        with conn.transaction():
            conn.execute(ins, (302, "committed", 1))
        out["transactions"] = {
            "error": tx_error,
            "rows": rows(conn.execute(
                sql.SQL("SELECT id, name FROM {} WHERE id >= 300 ORDER BY id").format(items)
            ).fetchall()),
        }

        # --- COPY FROM STDIN, text: write_row and raw blocks -----------------
        conn.execute(sql.SQL(
            "CREATE TABLE {} (id int PRIMARY KEY, name text, qty int)").format(copy_t))
        with conn.cursor() as cur:
            with cur.copy(sql.SQL("COPY {} (id, name, qty) FROM STDIN").format(copy_t)) as cp:
                for i in range(1, 5001):
                    cp.write_row((i, f"row {i}\twith tab, \\ and ✓", None if i % 10 == 0 else i))
            first = cur.rowcount
            with cur.copy(sql.SQL("COPY {} (id, name, qty) FROM STDIN").format(copy_t)) as cp:
                block = "".join(f"{i}\traw {i}\t{i}\n" for i in range(5001, 10001)).encode()
                for off in range(0, len(block), 7000):  # boundaries fall mid-row
                    cp.write(block[off:off + 7000])
            second = cur.rowcount
        out["copy_in_text"] = {
            "rowcounts": [first, second],
            "check": row(conn.execute(sql.SQL(
                "SELECT count(*), count(qty), sum(id), md5(string_agg(name, ',' ORDER BY id)) FROM {}"
            ).format(copy_t)).fetchone()),
        }

        # --- COPY FROM STDIN, binary ----------------------------------------
        conn.execute(sql.SQL(
            "CREATE TABLE {} (id int4 PRIMARY KEY, name text, price numeric, at timestamptz,"
            " data bytea, doc jsonb, tags text[])").format(copy_b))
        t0 = datetime.datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=datetime.timezone.utc)
        with conn.cursor() as cur:
            with cur.copy(sql.SQL(
                    "COPY {} (id, name, price, at, data, doc, tags) FROM STDIN (FORMAT BINARY)"
            ).format(copy_b)) as cp:
                cp.set_types(["int4", "text", "numeric", "timestamptz", "bytea", "jsonb", "text[]"])
                for i in range(1, 3001):
                    cp.write_row((
                        i, None if i % 7 == 0 else f"bin ✓ {i}", decimal.Decimal(i) / 8,
                        t0 + datetime.timedelta(seconds=i), bytes([i % 256]) * (i % 50),
                        Jsonb({"i": i, "even": i % 2 == 0}), [f"t{i}", "x"],
                    ))
            out["copy_in_binary"] = {
                "rowcount": cur.rowcount,
                "check": row(conn.execute(sql.SQL(
                    "SELECT count(*), count(name), sum(price), max(at), sum(length(data)),"
                    " sum((doc->>'i')::int), count(*) FILTER (WHERE (doc->>'even')::bool),"
                    " md5(string_agg(tags::text, ';' ORDER BY id)) FROM {}").format(copy_b)
                ).fetchone()),
            }

        # --- COPY TO STDOUT: text blocks, text rows, binary rows ------------
        with conn.cursor() as cur:
            h, n = hashlib.md5(), 0
            with cur.copy(sql.SQL("COPY (SELECT * FROM {} ORDER BY id) TO STDOUT").format(copy_t)) as cp:
                for data in cp:
                    h.update(data)
                    n += len(data)
            text_out = {"bytes": n, "md5": h.hexdigest(), "rowcount": cur.rowcount}
            with cur.copy(sql.SQL(
                    "COPY (SELECT id, name, qty FROM {} WHERE id % 1000 = 0 ORDER BY id) TO STDOUT"
            ).format(copy_t)) as cp:
                text_rows = [list(r) for r in cp.rows()]
            with cur.copy(sql.SQL(
                    "COPY (SELECT id, name, price, at, data, doc, tags FROM {} WHERE id % 499 = 0"
                    " ORDER BY id) TO STDOUT (FORMAT BINARY)").format(copy_b)) as cp:
                cp.set_types(["int4", "text", "numeric", "timestamptz", "bytea", "jsonb", "text[]"])
                bin_rows = rows(cp.rows())
            h2, n2 = hashlib.md5(), 0
            with cur.copy(sql.SQL(
                    "COPY (SELECT * FROM {} ORDER BY id) TO STDOUT (FORMAT BINARY)").format(copy_b)) as cp:
                for data in cp:
                    h2.update(data)
                    n2 += len(data)
        out["copy_out"] = {
            "text": text_out, "text_rows": rows(text_rows),
            "binary_rows": bin_rows, "binary_all": {"bytes": n2, "md5": h2.hexdigest()},
        }

        # --- pgvector --------------------------------------------------------
        conn.execute(sql.SQL("CREATE TABLE {} (id int PRIMARY KEY, embedding vector(3))").format(vec))
        with conn.cursor() as cur:
            cur.executemany(
                sql.SQL("INSERT INTO {} (id, embedding) VALUES (%s, %s::vector)").format(vec),
                [(1, "[1,2,3]"), (2, "[0.5,-1,2.25]"), (3, "[10,0,0]")])
        q = sql.SQL(
            "SELECT id, embedding, embedding::text, embedding <-> %s::vector AS dist FROM {}"
            " ORDER BY embedding <-> %s::vector").format(vec)
        text_vec = rows(conn.execute(q, ("[1,2,4]", "[1,2,4]")).fetchall())
        with conn.cursor(binary=True) as cur:
            cur.execute(q, ("[1,2,4]", "[1,2,4]"))
            binary_vec = rows(cur.fetchall())
        vec_error = None
        try:
            conn.execute(sql.SQL("INSERT INTO {} VALUES (4, %s::vector)").format(vec), ("[1,2]",))
        except psycopg.errors.DataException as e:
            vec_error = error(e)
        out["vector"] = {"text": text_vec, "binary": binary_vec, "dimension_error": vec_error}

        # --- prepared statements --------------------------------------------
        prepared = []
        for i in range(4):
            prepared.append(row(conn.execute(
                "SELECT %s::int * 3, %s::text", (i, f"p{i}"), prepare=True).fetchone()))
        stmts = conn.execute(
            "SELECT name, statement, parameter_types::text FROM pg_prepared_statements"
            " WHERE statement LIKE 'SELECT $1::int * 3%' ORDER BY name").fetchall()
        out["prepared"] = {"results": prepared, "server_statements": rows(stmts)}

        # --- binary results vs text results ---------------------------------
        typed = (
            "SELECT 1::int2 AS i2, 2::int4 AS i4, 3000000000::int8 AS i8, 1.5::float4 AS f4,"
            " 2.25::float8 AS f8, 12.345::numeric AS num, 'text ✓'::text AS t, true AS b,"
            " '2024-01-02 03:04:05.678+00'::timestamptz AS tstz,"
            " '2024-01-02 03:04:05'::timestamp AS ts, '2024-01-02'::date AS d,"
            " '\\xdeadbeef'::bytea AS by, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid AS u,"
            " '{\"a\": [1, 2]}'::jsonb AS j, ARRAY[1, NULL, 3] AS ia, ARRAY['a', 'b c'] AS ta,"
            " interval '1 day 2 hours' AS iv, NULL::int AS n, %s::int AS p"
        )
        with conn.cursor(binary=True) as cur:
            cur.execute(typed, (7,))
            bin_row = row(cur.fetchone())
            bin_desc = [[d.name, d.type_code] for d in cur.description]
            bin_formats = [cur.pgresult.fformat(i) for i in range(cur.pgresult.nfields)]
        with conn.cursor() as cur:
            cur.execute(typed, (7,))
            text_row = row(cur.fetchone())
            text_formats = [cur.pgresult.fformat(i) for i in range(cur.pgresult.nfields)]
        out["binary_results"] = {
            "binary": bin_row, "text": text_row, "description": bin_desc,
            "formats": [bin_formats, text_formats], "same_values": bin_row == text_row,
        }

        # --- server-side (named) cursor -------------------------------------
        with conn.transaction():
            with conn.cursor(name="lethe_named") as cur:
                cur.itersize = 700
                cur.execute(sql.SQL("SELECT id, name FROM {} ORDER BY id").format(copy_t))
                n, s = 0, 0
                for r in cur:
                    n += 1
                    s += r[0]
        out["named_cursor"] = [n, s]

        # --- LISTEN / NOTIFY -------------------------------------------------
        conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
        via_handler = []
        conn.add_notify_handler(lambda n: via_handler.append([n.channel, n.payload, n.pid]))
        conn.execute(sql.SQL("NOTIFY {}, 'to myself'").format(sql.Identifier(channel)))
        with psycopg.connect(conninfo, autocommit=True) as other:
            other.execute("SELECT pg_notify(%s, %s)", (channel, "from another session ✓"))
            other_pid = other.info.backend_pid
        received = []
        gen = conn.notifies()
        for n in gen:  # the watchdog bounds the wait
            received.append([n.channel, n.payload, n.pid == other_pid])
            gen.close()
        out["notify"] = {
            "self": [[c, p, pid == conn.info.backend_pid] for c, p, pid in via_handler],
            "other": received,
        }
        conn.execute(sql.SQL("UNLISTEN {}").format(sql.Identifier(channel)))

        # --- errors keep the connection usable ------------------------------
        errs = []
        for q in ("SELEC 1", "SELECT * FROM lethe_no_such_table", "SELECT %s::int"):
            try:
                conn.execute(q, ("not a number",) if "%s" in q else None)
            except psycopg.Error as e:
                errs.append(error(e))
        errs.append(row(conn.execute("SELECT 'ok'").fetchone()))
        out["errors"] = errs

        for t in (items, copy_t, copy_b, vec):
            conn.execute(sql.SQL("DROP TABLE {}").format(t))

    json.dump(out, sys.stdout, indent=1, sort_keys=True, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
