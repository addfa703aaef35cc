#!/usr/bin/env node
// Drive node-postgres ("pg", from ../node/node_modules) through a PostgreSQL
// connection and print what happened.
//
// Usage: node nodepg_client.js URL PREFIX
//
// URL is a postgres:// URL (the server itself or lethe-proxy in front of it);
// PREFIX names this run's table and notification channel, which are dropped
// first and last. The output is one JSON document (sorted keys) that depends
// only on the database, not on the connection, so a run through the proxy
// must print exactly what a direct run prints (test/integration/nodepg_test.go
// compares them).
//
// Exercised: a pool with concurrent parameterized queries, named prepared
// statements, transactions with rollback, a LangChain.js-style multi-row
// insert (500 rows x 3 parameters into jsonb and vector(3) columns), a large
// result, LISTEN/NOTIFY, and errors after which the clients keep working.
'use strict';

const crypto = require('crypto');
const path = require('path');
const { createRequire } = require('module');

const pg = createRequire(path.join(__dirname, '..', 'node', 'package.json'))('pg');

const WATCHDOG_MS = 90000;

// JSON with object keys sorted, so the output is byte-for-byte stable.
function stable(v) {
  if (Array.isArray(v)) return v.map(stable);
  if (v && typeof v === 'object' && !(v instanceof Date)) {
    const o = {};
    for (const k of Object.keys(v).sort()) o[k] = stable(v[k]);
    return o;
  }
  return v;
}

function pgError(e) {
  return {
    code: e.code, message: e.message, severity: e.severity, position: e.position,
    detail: e.detail, constraint: e.constraint, table: e.table,
  };
}

function md5(s) {
  return crypto.createHash('md5').update(s).digest('hex');
}

function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function main() {
  const [url, prefix] = process.argv.slice(2);
  if (!url || !prefix) throw new Error('usage: nodepg_client.js URL PREFIX');
  const table = `${prefix}_docs`;
  const channel = `${prefix}_ch`;
  const out = {};
  // 'error' events outside a query (a broken idle connection, an error after
  // end()) would crash node without a listener; record them instead. There
  // must be none.
  const unexpected = [];
  const watch = (emitter, who) => emitter.on('error', (e) => unexpected.push({ who, ...pgError(e) }));
  const newClient = (who) => {
    const c = new pg.Client({ connectionString: url });
    watch(c, who);
    return c;
  };

  const pool = new pg.Pool({ connectionString: url, max: 5, connectionTimeoutMillis: 10000 });
  watch(pool, 'pool');

  await pool.query(`DROP TABLE IF EXISTS ${table}`);
  await pool.query(
    `CREATE TABLE ${table} (id serial PRIMARY KEY, content text NOT NULL, metadata jsonb, embedding vector(3))`);

  // --- concurrent parameterized queries over the pool ----------------------
  const concurrent = await Promise.all(Array.from({ length: 60 }, (_, i) =>
    pool.query('SELECT $1::int * 2 AS x, $2::text AS s, $3::float8 AS f, $4::bool AS b, pg_backend_pid() AS pid',
      [i, `s${i} ✓`, i / 4, i % 2 === 0])));
  out.concurrent = {
    rows: concurrent.map((r) => [r.rows[0].x, r.rows[0].s, r.rows[0].f, r.rows[0].b]),
    several_backends: new Set(concurrent.map((r) => r.rows[0].pid)).size > 1,
  };

  // --- named prepared statements --------------------------------------------
  // On the pool, concurrently: each connection prepares the statement once.
  const named = await Promise.all(Array.from({ length: 30 }, (_, i) =>
    pool.query({ name: 'lethe_triple', text: 'SELECT $1::int * 3 AS x, $2::text AS t', values: [i, `v${i}`] })));
  out.named_pool = named.map((r) => [r.rows[0].x, r.rows[0].t]);
  // On one fresh client, where the server-side statement list is knowable.
  {
    const c = newClient('prepared-statement client');
    await c.connect();
    const res = [];
    for (let i = 0; i < 4; i++) {
      const r = await c.query({ name: 'lethe_sum', text: 'SELECT $1::int + $2::int AS s', values: [i, 10] });
      res.push(r.rows[0].s);
    }
    const stmts = await c.query(
      "SELECT name, statement, parameter_types::text AS types FROM pg_prepared_statements ORDER BY name");
    out.named_client = { results: res, server_statements: stmts.rows };
    await c.end();
  }

  // --- transactions -----------------------------------------------------------
  {
    const c = await pool.connect();
    try {
      await c.query('BEGIN');
      await c.query(`INSERT INTO ${table} (content) VALUES ($1)`, ['rolled back']);
      const inside = (await c.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n;
      await c.query('ROLLBACK');
      const after = (await c.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n;

      await c.query('BEGIN');
      await c.query(`INSERT INTO ${table} (content) VALUES ($1)`, ['also rolled back']);
      let failed = null;
      let aborted = null;
      try { await c.query('SELECT 1/0'); } catch (e) { failed = pgError(e); }
      try { await c.query('SELECT 1'); } catch (e) { aborted = pgError(e); }
      const rollback = (await c.query('ROLLBACK')).command;
      const final = (await c.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n;
      out.transaction = { inside, after, failed, aborted, rollback, final };
    } finally {
      c.release();
    }
  }

  // --- LangChain.js-shaped multi-row insert: 500 rows x 3 parameters --------
  {
    const rows = 500;
    const params = [];
    const tuples = [];
    for (let i = 1; i <= rows; i++) {
      const n = params.length;
      tuples.push(`($${n + 1}, $${n + 2}, $${n + 3})`);
      params.push(`document ${i}: “quoted” ✓`,
        JSON.stringify({ source: 'lethe', i, tags: ['a', `t${i % 3}`], nested: { even: i % 2 === 0 } }),
        `[${i},${i / 2},${-i}]`);
    }
    const ins = await pool.query(
      `INSERT INTO ${table} (content, metadata, embedding) VALUES ${tuples.join(', ')} RETURNING id`, params);
    const search = await pool.query(
      `SELECT content, metadata, embedding::text AS embedding, embedding <-> $1 AS distance
         FROM ${table} ORDER BY embedding <-> $1, id LIMIT 3`, ['[10,5,-10]']);
    const filtered = await pool.query(
      `SELECT count(*)::int AS n, sum((metadata->>'i')::int)::int AS s FROM ${table}
        WHERE metadata @> $1::jsonb`, [JSON.stringify({ nested: { even: true } })]);
    out.bulk_insert = {
      params: params.length,
      rowCount: ins.rowCount,
      ids: [ins.rows[0].id, ins.rows[ins.rows.length - 1].id],
      search: search.rows,
      filtered: filtered.rows[0],
    };
  }

  // --- a large result ---------------------------------------------------------
  {
    const r = await pool.query({
      text: 'SELECT g, md5(g::text) AS h FROM generate_series(1, $1::int) AS g', values: [20000], rowMode: 'array',
    });
    out.large_result = {
      rows: r.rowCount, fields: r.fields.map((f) => f.name), md5: md5(r.rows.map((x) => x.join(':')).join('\n')),
    };
  }

  // --- LISTEN / NOTIFY ----------------------------------------------------------
  {
    const listener = newClient('listener');
    await listener.connect();
    const got = new Promise((resolve) => listener.once('notification', resolve));
    await listener.query(`LISTEN "${channel}"`);
    const c = await pool.connect();
    let pid;
    try {
      pid = (await c.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
      await c.query('SELECT pg_notify($1, $2)', [channel, 'hello from node ✓']);
    } finally {
      c.release();
    }
    const msg = await withTimeout(got, 10000, 'the notification');
    out.notify = { channel: msg.channel, payload: msg.payload, from_notifier: msg.processId === pid };
    await listener.query(`UNLISTEN "${channel}"`);
    await listener.end();
  }

  // --- errors: reported, and the clients keep working ------------------------
  {
    const errs = [];
    for (const [text, values] of [['SELEC 1', undefined], ['SELECT * FROM lethe_no_such_table', undefined],
      ['SELECT $1::int AS x', ['not a number']], [`INSERT INTO ${table} (id, content) SELECT min(id), 'dup' FROM ${table}`, undefined]]) {
      try {
        await pool.query(text, values);
        errs.push('no error');
      } catch (e) {
        errs.push(pgError(e));
      }
    }
    const c = await pool.connect();
    try {
      try { await c.query('SELECT nope FROM nowhere'); } catch (e) { errs.push(pgError(e)); }
      errs.push((await c.query('SELECT $1::text AS ok', ['still working'])).rows[0].ok);
    } finally {
      c.release();
    }
    errs.push((await pool.query('SELECT count(*)::int AS n FROM ' + table)).rows[0].n);
    out.errors = errs;
  }

  // Clients that connect, query and end, as short-lived scripts do.
  out.short_lived = await Promise.all(Array.from({ length: 10 }, async (_, i) => {
    const c = newClient(`short-lived ${i}`);
    await c.connect();
    const r = await c.query('SELECT $1::int AS i', [i]);
    await c.end();
    return r.rows[0].i;
  }));

  await pool.query(`DROP TABLE ${table}`);
  await pool.end();
  out.unexpected_errors = unexpected;
  process.stdout.write(JSON.stringify(stable(out), null, 1) + '\n');
}

const watchdog = setTimeout(() => {
  process.stderr.write(`nodepg_client: watchdog fired after ${WATCHDOG_MS} ms\n`);
  process.exit(3);
}, WATCHDOG_MS);
watchdog.unref();

main().catch((e) => {
  process.stderr.write(`nodepg_client: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
