#!/usr/bin/python3
"""Write shapes of Python vector-store libraries, reproduced with psycopg 3.

Usage: /usr/bin/python3 psycopg_shapes.py CONNINFO PREFIX SHAPE

SHAPE is one of langchain_postgres, mem0, vecs, llamaindex, copy_binary. Each
creates its table(s) the way the library does (CREATE ... IF NOT EXISTS; the
Go test drops them before and after) and writes rows for two data subjects,
alice@example.com and bob@example.com, sending the SQL the library sends with
the same protocol choices. The libraries themselves cannot be installed here
(no PyPI), so each function cites the library code whose SQL it follows.

The output is one JSON document (sorted keys) that depends only on what was
written, not on the connection, so a run through lethe-proxy prints exactly
what a direct run prints. "protocol" records what psycopg actually put on the
wire for the write: the statement text, each parameter's type OID and format
(read back from the cursor's converted query), simple vs extended protocol,
pipeline mode and server-side prepared statements.

Observed with psycopg 3.1.7 (Debian) on the wire: outside autocommit psycopg
opens and ends each transaction with "BEGIN"/"COMMIT" sent over the extended
protocol (Parse/Bind/Describe/Execute/Sync, unnamed statement); statements
without parameters (the DDL, SET search_path, COPY) go as simple Query
messages; statements with parameters go as Parse/Bind/Describe/Execute/Sync
with the unnamed statement, except executemany, which pipelines one named
prepared statement (_pg3_0) and one Bind/Describe/Execute per row before a
single Sync.
"""

import json
import struct
import sys
import uuid

import psycopg
from psycopg import ClientCursor
from psycopg.adapt import Dumper
from psycopg.pq import Format
from psycopg.types import TypeInfo
from psycopg.types.json import Jsonb, Json

SUBJECTS = ["alice@example.com", "bob@example.com"]
PER_SUBJECT = 3
DIM = 8


def embedding(subject_index, i):
    """A deterministic 8-dimensional embedding."""
    return [round(0.125 * (k + 1) + 0.5 * subject_index + 0.01 * i, 4) for k in range(DIM)]


def vector_text(vec):
    """pgvector-python's text form (Vector.to_text): '[' + ','.join(str(float(v))) + ']'."""
    return "[" + ",".join(str(float(v)) for v in vec) + "]"


def subject_uuid(s, i, kind):
    """A fixed uuid string per subject, row and shape kind: ...-a... for alice, ...-b... for bob."""
    return f"00000000-0000-4000-8{kind}00-{'ab'[s]}{i:011d}"


def rows():
    """(subject_index, subject, i) interleaved alice, bob, alice, ..."""
    for i in range(PER_SUBJECT):
        for s, subject in enumerate(SUBJECTS):
            yield s, subject, i


def wire(cur, protocol, **extra):
    """What psycopg sent for the cursor's last query."""
    q = cur._query  # psycopg's converted query: text, params, types, formats
    out = {
        "protocol": protocol,
        "statement": q.query.decode() if isinstance(q.query, bytes) else q.query,
    }
    if q.params is not None:
        out["param_count"] = len(q.params)
        out["param_oids"] = sorted(set(int(t) for t in (q.types or ())))
        out["param_formats"] = sorted(
            set("binary" if f == Format.BINARY else "text" for f in (q.formats or ()))
        )
    out.update(extra)
    return out


def server_prepared(conn):
    with conn.cursor() as cur:
        cur.execute("SELECT name, statement FROM pg_prepared_statements ORDER BY name")
        return [list(r) for r in cur.fetchall()]


def langchain_postgres(conn, prefix):
    """langchain-postgres 0.0.15 PGVector (langchain_postgres/vectorstores.py):
    SQLAlchemy 2.0 models CollectionStore/EmbeddingStore, engine
    "postgresql+psycopg://". add_embeddings() builds
        insert(EmbeddingStore).values(data).on_conflict_do_update(
            index_elements=["id"], set_={embedding, document, cmetadata from excluded})
    which SQLAlchemy's psycopg dialect renders with %(name_mN)s placeholders and
    bind casts (render_bind_cast: VARCHAR, UUID, JSONB; pgvector's Vector type
    has none). Values: id str, collection_id uuid.UUID (psycopg dumps it
    binary), embedding str from pgvector.sqlalchemy.Vector (text), document
    str, cmetadata psycopg Jsonb (SQLAlchemy's _PGJSONB wraps the dict in
    dialect._psycopg_Jsonb; psycopg dumps Jsonb as text jsonb by default).
    One statement, server-side binding, extended protocol, inside a
    transaction (psycopg sends BEGIN), then COMMIT.
    """
    coll = f"{prefix}_langchain_pg_collection"
    emb = f"{prefix}_langchain_pg_embedding"
    with conn.cursor() as cur:
        cur.execute(
            f"CREATE TABLE IF NOT EXISTS {coll} (uuid UUID NOT NULL, name VARCHAR NOT NULL, "
            f"cmetadata JSON, PRIMARY KEY (uuid), UNIQUE (name))"
        )
        cur.execute(
            f"CREATE TABLE IF NOT EXISTS {emb} (id VARCHAR NOT NULL, collection_id UUID, "
            f"embedding VECTOR({DIM}), document VARCHAR, cmetadata JSONB, PRIMARY KEY (id), "
            f"FOREIGN KEY(collection_id) REFERENCES {coll} (uuid) ON DELETE CASCADE)"
        )
        cur.execute(
            f"CREATE INDEX IF NOT EXISTS ix_{prefix}_cmetadata_gin ON {emb} "
            f"USING gin (cmetadata jsonb_path_ops)"
        )
    conn.commit()
    collection_id = uuid.UUID("5e3b8f0e-0000-4000-8000-00000000c011")
    with conn.cursor() as cur:
        cur.execute(
            f"INSERT INTO {coll} (uuid, name, cmetadata) VALUES (%(uuid)s::UUID, %(name)s::VARCHAR, %(cmetadata)s::JSON)",
            {"uuid": collection_id, "name": "lethe_shapes", "cmetadata": Json(None)},
        )
    conn.commit()

    values, params, counts, ids = [], {}, {}, {}
    for m, (s, subject, i) in enumerate(rows()):
        values.append(
            f"(%(id_m{m})s::VARCHAR, %(collection_id_m{m})s::UUID, %(embedding_m{m})s, "
            f"%(document_m{m})s::VARCHAR, %(cmetadata_m{m})s::JSONB)"
        )
        doc_id = f"lcpg-{subject.split('@')[0]}-{i}"
        params[f"id_m{m}"] = doc_id
        params[f"collection_id_m{m}"] = collection_id
        params[f"embedding_m{m}"] = vector_text(embedding(s, i))
        params[f"document_m{m}"] = f"note {i} about {subject}"
        params[f"cmetadata_m{m}"] = Jsonb({"user_id": subject, "source": "langchain_postgres", "seq": i})
        counts[subject] = counts.get(subject, 0) + 1
        ids.setdefault(subject, []).append(doc_id)
    sql = (
        f"INSERT INTO {emb} (id, collection_id, embedding, document, cmetadata) VALUES "
        + ", ".join(values)
        + " ON CONFLICT (id) DO UPDATE SET embedding = excluded.embedding, "
        "document = excluded.document, cmetadata = excluded.cmetadata"
    )
    with conn.cursor() as cur:
        cur.execute(sql, params)
        proto = wire(cur, "extended", transaction=True, pipeline=False, rowcount=cur.rowcount)
    conn.commit()
    return emb, counts, ids, proto


def mem0(conn, prefix):
    """mem0 mem0/vector_stores/pgvector.py (PGVector, psycopg 3 branch, as
    stored at mem0ai/mem0 commit 014e8900): every cursor comes from
    _get_cursor(), which runs SET search_path TO "<schema>", public first;
    create_col() runs CREATE TABLE IF NOT EXISTS <collection> (id UUID PRIMARY
    KEY, vector vector(d), payload JSONB); insert() runs
        cur.executemany("INSERT INTO <collection> (id, vector, payload) VALUES (%s, %s, %s)", data)
    with data = [(id str, vector list[float], json.dumps(payload) str)], then
    conn.commit(). psycopg 3 (libpq >= 14) runs executemany in pipeline mode
    with the statement prepared once (named _pg3_N) and one Bind/Execute per
    row: id and payload text with unspecified OID, the vector as a float8[]
    (assignment cast to vector in pgvector).
    """
    table = f"{prefix}_mem0"
    with conn.cursor() as cur:
        cur.execute('SET search_path TO "public", public')
        cur.execute("CREATE EXTENSION IF NOT EXISTS vector WITH SCHEMA public")
        cur.execute(
            f"""
                CREATE TABLE IF NOT EXISTS {table} (
                    id UUID PRIMARY KEY,
                    vector vector({DIM}),
                    payload JSONB
                );
                """
        )
    conn.commit()
    data, counts, ids = [], {}, {}
    for s, subject, i in rows():
        mem_id = subject_uuid(s, i, "0")
        payload = {
            "user_id": subject,
            "agent_id": "lethe-agent",
            "data": f"memory {i} of {subject}",
            "hash": f"h{s}{i}",
            "created_at": "2026-01-02T03:04:05.678901-08:00",
        }
        data.append((mem_id, embedding(s, i), json.dumps(payload)))
        counts[subject] = counts.get(subject, 0) + 1
        ids.setdefault(subject, []).append(mem_id)
    with conn.cursor() as cur:
        cur.execute('SET search_path TO "public", public')
        cur.executemany(f"INSERT INTO {table} (id, vector, payload) VALUES (%s, %s, %s)", data)
        proto = wire(
            cur, "extended", transaction=True,
            pipeline=psycopg.Pipeline.is_supported(), executemany_rows=len(data),
        )
    conn.commit()
    proto["server_prepared"] = server_prepared(conn)
    conn.commit()
    return table, counts, ids, proto


def vecs(conn, prefix):
    """Supabase vecs 0.4 (vecs/collection.py Collection.upsert): SQLAlchemy
    Table vecs.<name>(id VARCHAR PRIMARY KEY, vec VECTOR(d) NOT NULL, metadata
    JSONB NOT NULL DEFAULT '{}'::jsonb); upsert() inserts 500-record chunks as
        postgresql.insert(table).values(chunk).on_conflict_do_update(
            index_elements=[table.c.id], set_=dict(vec=excluded.vec, metadata=excluded.metadata))
    over psycopg2, which binds client side: the whole statement goes out as
    one simple-protocol Query with inline literals ('id', '[0.1,...]' from
    pgvector.sqlalchemy.Vector, and the JSON text as a plain string literal:
    SQLAlchemy's psycopg2 JSONB serializes to str, no ::jsonb cast), after a
    BEGIN (itself a simple Query), then a simple "COMMIT". Emulated with
    psycopg 3's ClientCursor, which also binds client side and sends a Query
    message when not in a pipeline.
    """
    table = f"vecs.{prefix}_docs"
    with conn.cursor() as cur:
        cur.execute("create schema if not exists vecs;")
        cur.execute("create extension if not exists vector;")
        cur.execute(
            f"CREATE TABLE IF NOT EXISTS {table} (id VARCHAR NOT NULL, vec VECTOR({DIM}) NOT NULL, "
            f"metadata JSONB DEFAULT '{{}}'::jsonb NOT NULL, PRIMARY KEY (id))"
        )
    conn.commit()
    values, params, counts, ids = [], {}, {}, {}
    for m, (s, subject, i) in enumerate(rows()):
        values.append(f"(%(id_m{m})s, %(vec_m{m})s, %(metadata_m{m})s)")
        rec_id = f"vecs-{subject.split('@')[0]}-{i}"
        params[f"id_m{m}"] = rec_id
        params[f"vec_m{m}"] = vector_text(embedding(s, i))
        params[f"metadata_m{m}"] = json.dumps({"user_id": subject, "source": "vecs", "seq": i})
        counts[subject] = counts.get(subject, 0) + 1
        ids.setdefault(subject, []).append(rec_id)
    sql = (
        f"INSERT INTO {table} (id, vec, metadata) VALUES "
        + ", ".join(values)
        + " ON CONFLICT (id) DO UPDATE SET vec = excluded.vec, metadata = excluded.metadata"
    )
    # psycopg2 opens the transaction with a simple-protocol "BEGIN" and ends
    # it with "COMMIT" (psycopg 3 would send those over the extended protocol
    # outside autocommit), so drive the transaction by hand in autocommit.
    conn.autocommit = True
    with ClientCursor(conn) as cur:
        cur.execute("BEGIN")
        cur.execute(sql, params, prepare=False)
        proto = wire(cur, "simple", transaction=True, pipeline=False, rowcount=cur.rowcount)
        cur.execute("COMMIT")
    return table, counts, ids, proto


def llamaindex(conn, prefix):
    """llama-index-vector-stores-postgres 0.5 PGVectorStore: SQLAlchemy model
    data_<table_name>(id BIGSERIAL PRIMARY KEY, text VARCHAR NOT NULL,
    metadata_ JSON (JSONB with use_jsonb=True), node_id VARCHAR, embedding
    VECTOR(d)); add() does session.add(row) per node inside one transaction,
    and the ORM flush inserts the batch without ids, RETURNING the generated
    ids. The library drives psycopg2 (sync) or asyncpg (async); reproduced
    here with psycopg 3 server-side binding: one multi-row INSERT with
    metadata_ as psycopg Json (text, json OID) carrying the user metadata at
    the top level (node_to_metadata_dict adds _node_content, _node_type,
    document_id, doc_id, ref_doc_id beside it) and the embedding as text.
    """
    table = f"public.data_{prefix}"
    with conn.cursor() as cur:
        cur.execute(
            f"CREATE TABLE IF NOT EXISTS {table} (id BIGSERIAL NOT NULL, text VARCHAR NOT NULL, "
            f"metadata_ JSON, node_id VARCHAR, embedding VECTOR({DIM}), PRIMARY KEY (id))"
        )
    conn.commit()
    values, params, counts = [], [], {}
    for s, subject, i in rows():
        node_id = subject_uuid(s, i, "1")
        meta = {
            "user_id": subject,
            "seq": i,
            "_node_content": json.dumps({"id_": node_id, "metadata": {"user_id": subject}}),
            "_node_type": "TextNode",
            "document_id": f"doc-{s}",
            "doc_id": f"doc-{s}",
            "ref_doc_id": f"doc-{s}",
        }
        values.append("(%s::VARCHAR, %s::JSON, %s::VARCHAR, %s)")
        params += [f"note {i} about {subject}", Json(meta), node_id, vector_text(embedding(s, i))]
        counts[subject] = counts.get(subject, 0) + 1
    table_name = table.split(".", 1)[1]
    sql = (
        f"INSERT INTO {table} (text, metadata_, node_id, embedding) VALUES "
        + ", ".join(values)
        + f" RETURNING {table_name}.id"
    )
    with conn.cursor() as cur:
        cur.execute(sql, params)
        returned = len(cur.fetchall())
        proto = wire(cur, "extended", transaction=True, pipeline=False, returned=returned)
    conn.commit()
    return table, counts, None, proto


class Vector:
    """A stand-in for pgvector.Vector (pgvector-python is not installable here)."""

    def __init__(self, values):
        self.values = [float(v) for v in values]


class VectorBinaryDumper(Dumper):
    """pgvector-python 0.3 pgvector/psycopg/vector.py VectorBinaryDumper:
    Vector._to_db_binary = struct.pack('>HH', dim, 0) + big-endian float4s."""

    format = Format.BINARY

    def dump(self, obj):
        return struct.pack(">HH", len(obj.values), 0) + struct.pack(f">{len(obj.values)}f", *obj.values)


def copy_binary(conn, prefix):
    """pgvector-python bulk loading (README "Bulk load with COPY", psycopg 3):
        register_vector(conn)
        with cur.copy('COPY items (embedding) FROM STDIN WITH (FORMAT BINARY)') as copy:
            copy.set_types(['vector'])
            for embedding in embeddings: copy.write_row([embedding])
    register_vector fetches TypeInfo('vector') and registers binary dumpers
    whose oid is vector's (what set_types needs); done here the same way with
    a local copy of the binary dumper, so the vector goes out in binary.
    Columns here: id text, embedding vector, metadata jsonb (binary jsonb =
    version byte 1 + JSON).
    """
    table = f"{prefix}_copy"
    with conn.cursor() as cur:
        cur.execute(f"CREATE TABLE IF NOT EXISTS {table} (id text PRIMARY KEY, embedding vector({DIM}), metadata jsonb)")
    conn.commit()
    info = TypeInfo.fetch(conn, "vector")
    info.register(conn)
    conn.adapters.register_dumper(Vector, type("", (VectorBinaryDumper,), {"oid": info.oid}))
    counts, ids, n = {}, {}, 0
    stmt = f"COPY {table} (id, embedding, metadata) FROM STDIN WITH (FORMAT BINARY)"
    with conn.cursor() as cur:
        with cur.copy(stmt) as copy:
            copy.set_types(["text", "vector", "jsonb"])
            for s, subject, i in rows():
                row_id = f"copy-{subject.split('@')[0]}-{i}"
                copy.write_row([row_id, Vector(embedding(s, i)), Jsonb({"user_id": subject, "source": "copy", "seq": i})])
                counts[subject] = counts.get(subject, 0) + 1
                ids.setdefault(subject, []).append(row_id)
                n += 1
        proto = {"protocol": "copy", "statement": stmt, "copy_format": "binary",
                 "column_types": ["text", "vector", "jsonb"], "vector_binary": True,
                 "transaction": True, "rowcount": cur.rowcount}
    conn.commit()
    return table, counts, ids, proto


SHAPES = {
    "langchain_postgres": langchain_postgres,
    "mem0": mem0,
    "vecs": vecs,
    "llamaindex": llamaindex,
    "copy_binary": copy_binary,
}


def main():
    if len(sys.argv) != 4 or sys.argv[3] not in SHAPES:
        sys.exit("usage: psycopg_shapes.py CONNINFO PREFIX " + "|".join(SHAPES))
    conninfo, prefix, shape = sys.argv[1:]
    with psycopg.connect(conninfo, connect_timeout=10) as conn:
        table, counts, ids, proto = SHAPES[shape](conn, prefix)
    out = {
        "shape": shape,
        "table": table,
        "rows": sum(counts.values()),
        "counts": counts,
        "ids": ids or {},
        "wire": proto,
        "psycopg": psycopg.__version__,
    }
    json.dump(out, sys.stdout, sort_keys=True, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
