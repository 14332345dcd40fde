import t from 'tap';
import { flatten, ident, join, stmt } from '../src/fhir/statement.ts';
import { query, STATEMENT_TEXTS_KEPT, statementText, statementTextsKept } from '../src/store/query.ts';
import { testDatabase } from './helpers/db.ts';

/** Statements composed as text: parameters numbered in order through nesting, identifiers quoted. */
t.test('flatten numbers parameters in order through nested statements', async (t) => {
  const inner = stmt`t.code = ${'a'} and t.sys = ${3}`;
  const s = stmt`select ${ident('r')}.rid from x ${ident('r')} where ${inner} and r.n > ${7} and ${join([stmt`a = ${1}`, stmt`b = ${2}`], 'or')}`;
  t.same(flatten(s), { text: 'select "r".rid from x "r" where t.code = $1 and t.sys = $2 and r.n > $3 and a = $4 or b = $5', params: ['a', 3, 7, 1, 2] });
  t.same(flatten(join([], 'and')), { text: 'true', params: [] });
  t.same(flatten(join([], 'or')), { text: 'false', params: [] });
  t.same(flatten(join([stmt`select 1`, stmt`select ${2}`], 'union')), { text: 'select 1 union select $1', params: [2] });
  t.equal(flatten(stmt`${ident('we"ird')}`).text, '"we""ird"', 'quotes doubled in identifiers');
  t.equal(flatten(stmt`${"'; drop table x; --"}`).text, '$1', 'values are never text');
});

t.test('query: parameters of every kind the compiler binds reach PostgreSQL typed', async (t) => {
  const db = await testDatabase(t);
  const [row] = await query<{ a: string; b: number; c: string[]; d: boolean; e: string }[]>(
    db.sql,
    stmt`select ${'x'}::text as a, ${5}::int as b, ${['p', 'q,r', '"s"']}::text[] as c, ${new Date(Date.UTC(2024, 0, 2, 3, 4, 5))}::timestamptz = '2024-01-02T03:04:05Z'::timestamptz as d,
      (${['9007199254740993']}::bigint[])[1]::text as e`,
  );
  t.same({ ...row, c: [...row.c] }, { a: 'x', b: 5, c: ['p', 'q,r', '"s"'], d: true, e: '9007199254740993' });
});

t.test('statementText keeps one copy per text, and a bounded number of them', async (t) => {
  const first = statementText(`select ${'1'} as kept_text_probe`);
  const held = statementTextsKept();
  t.equal(statementText(['select 1', 'as kept_text_probe'].join(' ')), first);
  t.equal(statementTextsKept(), held, 'an equal text, built apart, is not kept a second time');
  statementText('select 2 as kept_text_probe');
  t.equal(statementTextsKept(), held + 1, 'another text is');
  let most = 0;
  let wrong = 0;
  for (let i = 0; i < STATEMENT_TEXTS_KEPT + 10; i++) {
    if (statementText(`select ${i} as n`) !== `select ${i} as n`) wrong++;
    most = Math.max(most, statementTextsKept());
  }
  t.equal(wrong, 0, 'every text given back as it is');
  t.equal(most, STATEMENT_TEXTS_KEPT, 'never more than the bound');
  t.ok(statementTextsKept() < STATEMENT_TEXTS_KEPT, 'emptied once full, then filled again');
});
