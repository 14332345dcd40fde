import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { connectPools, migrate, openDatabase, type Database } from '../../src/db.ts';

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
  const { sql, generic } = connectPools(u.toString(), { max: 10 });
  await migrate(sql);
  const db: Database = {
    sql,
    generic,
    url: u.toString(),
    embedded: false,
    close: async () => {
      await Promise.all([sql.end({ timeout: 5 }), generic.end({ timeout: 5 })]);
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end({ timeout: 5 });
    },
  };
  t.teardown(() => db.close());
  return db;
}
