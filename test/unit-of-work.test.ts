import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Queryable } from '../src/ports/db/db.ts';
import { inUnitOfWork, type CommitMode } from '../src/ports/db/unit-of-work.ts';
import { startServer, type TestServer } from './support/server.ts';

/** The units of work on the suite's database (PGlite, or PostgreSQL with TEST_DATABASE_URL), through the app's own db. */
describe('units of work: a call and its record commit together', () => {
  let server: TestServer;
  const db = () => server.app.db;
  const rows = async () => (await db().query<{ v: string }>('select v from unit_probe order by v')).map((r) => r.v);
  const insert = (q: Queryable, v: string) => q.query('insert into unit_probe (v) values ($1)', [v]);
  const record = (v: string) => async (q: Queryable, output: unknown) => void (await insert(q, `${v}:${output === undefined ? '-' : String(output)}`));
  const unit = <T>(mode: CommitMode, work: () => Promise<T>, v = 'record') => inUnitOfWork(db(), mode, work, record(v));

  beforeAll(async () => {
    server = await startServer({}, { worker: false });
  });
  afterAll(() => server?.close());
  beforeAll(() => db().query('create table unit_probe (v text primary key)'));
  const reset = () => db().query('delete from unit_probe');

  it('together: the writes and the record (with the output) commit as one', async () => {
    await reset();
    const out = await unit('together', async () => {
      await db().query(`insert into unit_probe (v) values ('a')`);
      await db().transaction((tx) => insert(tx, 'b'));
      // A read after the first write sees it: it runs in the same transaction.
      return (await rows()).join('+');
    });
    expect(out).toBe('a+b');
    expect(await rows()).toEqual(['a', 'b', 'record:a+b']);
  });

  it('together: a throw after a write undoes the write, and nothing is recorded', async () => {
    await reset();
    await expect(
      unit('together', async () => {
        await db().transaction((tx) => insert(tx, 'a'));
        throw new Error('handler failed after writing');
      }),
    ).rejects.toThrow('handler failed after writing');
    expect(await rows()).toEqual([]);
  });

  it('together: a failing record undoes the writes and fails the call', async () => {
    await reset();
    await insert(db(), 'record:done');
    // The record's insert collides with an existing key: the call must fail and leave nothing of its own.
    await expect(unit('together', async () => (await insert(db(), 'a'), 'done'))).rejects.toThrow();
    expect(await rows()).toEqual(['record:done']);
  });

  it('together: a failed inner transaction that the call catches is undone alone (a savepoint)', async () => {
    await reset();
    await unit('together', async () => {
      await insert(db(), 'kept');
      await db()
        .transaction(async (tx) => {
          await insert(tx, 'undone');
          await insert(tx, 'kept'); // duplicate key
        })
        .catch(() => {});
      await insert(db(), 'after');
      return 'x';
    });
    expect(await rows()).toEqual(['after', 'kept', 'record:x']);
  });

  it('together: a call that wrote nothing is still recorded, on its own', async () => {
    await reset();
    await unit('together', async () => (await rows()).length);
    expect(await rows()).toEqual(['record:0']);
  });

  it('together: a transaction of the call that only read ends at once, holding nothing for the rest of the call', async () => {
    await reset();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const call = unit('together', async () => {
      await db().transaction(async (tx) => {
        await tx.query(`select set_config('statement_timeout', '5s', true)`);
        return tx.query('select count(*)::int as n from unit_probe');
      });
      await gate;
      await insert(db(), 'late');
      return 'r';
    });
    // On the embedded database a held transaction would make this wait for the call: it must not.
    await new Promise((r) => setTimeout(r, 50));
    expect(await rows()).toEqual([]);
    release();
    await call;
    expect(await rows()).toEqual(['late', 'record:r']);
  });

  it('in-steps: each step commits on its own, the first one carrying the record (without an output)', async () => {
    await reset();
    await expect(
      unit('in-steps', async () => {
        await db().transaction((tx) => insert(tx, 'step1'));
        await db().transaction(async (tx) => {
          await insert(tx, 'step2');
          throw new Error('the second step fails');
        });
      }),
    ).rejects.toThrow('the second step fails');
    expect(await rows()).toEqual(['record:-', 'step1']);
  });

  it('other calls are not blocked for good by a call holding its transaction', async () => {
    await reset();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const held = unit('together', async () => {
      await insert(db(), 'held');
      await gate;
      return 'h';
    });
    // A statement from outside the call (another request) completes, and sees the write and its record both or neither.
    const outside = new Promise<string[]>((resolve, reject) => setTimeout(() => rows().then(resolve, reject), 50));
    setTimeout(release, 200);
    await held;
    const seen = await outside;
    expect(seen.includes('held')).toBe(seen.includes('record:h'));
    expect(await rows()).toEqual(['held', 'record:h']);
  });
});
