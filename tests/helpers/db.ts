import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { connectPools, endPools, migrate, openDatabase, type Database } from '../../src/db.ts';

/**
 * A real, empty, migrated PostgreSQL database for one test file: a throw-away embedded cluster by
 * default, or a fresh database created on DATABASE_URL's server (dropped at the end) when it is set.
 */
interface Teardown {
  teardown(fn: () => unknown): void;
}

export async function testDatabase(t: Teardown): Promise<Database> {
  const url = process.env.DATABASE_URL;
  if (!url) {
    const db = await openDatabase({ persistent: false, profile: 'test', max: 10 });
    t.teardown(() => db.close());
    return db;
  }
  const name = `annuaire_test_${process.pid}_${randomBytes(3).toString('hex')}`;
  const admin = postgres(url, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const u = new URL(url);
  u.pathname = `/${name}`;
  const pools = connectPools(u.toString(), { max: 10, heavyMax: 2 });
  await migrate(pools.sql);
  const db: Database = {
    ...pools,
    url: u.toString(),
    embedded: false,
    close: async () => {
      await endPools(pools);
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end({ timeout: 5 });
    },
  };
  t.teardown(() => db.close());
  return db;
}
