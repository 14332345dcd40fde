// The open-data extracts written to disk like the published ones: three `|`-separated files named
// PS_LibreAcces_<kind>_<YYYYMMDDhhmm>.txt, optionally in one ZIP, with the quirks of the real files
// (Windows-1252, CRLF, the 52-column form, exact duplicates, bad lines), each deterministic; and,
// beside them, the same day's FINESS feed (open-data-finess.ts) and MSSanté extraction (open-data-mssante.ts).
// Lines are encoded in batches and written with backpressure: memory does not grow with the files.

import fs from 'node:fs';
import { once } from 'node:events';
import path from 'node:path';
import { PassThrough, type Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import iconv from 'iconv-lite';
import yazl from 'yazl';
import { ACTIVITY_COLUMNS_52, headerText, KINDS, type ColumnKey, type FileKind, type RppsKind } from '../vocabulary/formats/rpps.ts';
import { OpenDataModel, type ModelOptions } from './open-data.ts';
import { writeFiness, type FinessSummary } from './open-data-finess.ts';
import { MSS_ZIP, mssFileName, writeMss, type MssHeaderVariant, type MssSummary } from './open-data-mssante.ts';
import { Rng } from './prng.ts';
import { REFERENCE_MS } from './time.ts';

export interface OpenDataFileOptions extends ModelOptions {
  outDir: string;
  /** one ZIP archive holding the three files, as the ANS download. */
  zip?: boolean;
  /** Personne_activite in its older 52-column form (no fonction, no genre d'activité). */
  form52?: boolean;
  /** files written in Windows-1252 (the others in UTF-8). */
  win1252?: readonly FileKind[];
  /** files whose lines end with CRLF (the others with LF). */
  crlf?: readonly FileKind[];
  /** share of lines written twice in a row. */
  duplicateShare?: number;
  /** share of lines followed by a bad copy: a field short, or without identifier. */
  badShare?: number;
  /** the national sources written (default the RPPS extracts only; the CLI's default is all three). */
  sources?: readonly Source[];
  /** the MSSanté header form (default: by seed and day, the suffixed one about one day in four). */
  mssHeaderVariant?: MssHeaderVariant;
  log?: (line: string) => void;
}

export const SOURCES = ['rpps', 'finess', 'mss'] as const;
export type Source = (typeof SOURCES)[number];

export const DEFAULT_QUIRKS = {
  win1252: ['savoirFaire'] as readonly FileKind[],
  crlf: ['activity'] as readonly FileKind[],
  duplicateShare: 0.002,
  badShare: 0.0005,
};

export interface OpenDataFileSummary {
  kind: FileKind;
  /** file name (inside the archive with `zip`). */
  name: string;
  encoding: 'utf8' | 'win1252';
  /** data lines written, duplicates and bad lines included. */
  lines: number;
  bytes: number;
  duplicates: number;
  /** bad lines: one field short, or with an empty identifier (Identifiant PP and IDNPS). */
  shortLines: number;
  emptyIdLines: number;
}

export interface OpenDataSummary {
  day: number;
  stamp: string;
  /** the archive's path with `zip`, else undefined. */
  zip?: string;
  /** the RPPS files (none without the rpps source). */
  files: OpenDataFileSummary[];
  finess?: FinessSummary;
  /** the MSSanté extraction; `zip` its archive's path with the `zip` option. */
  mss?: MssSummary & { zip?: string };
}

const ORDER: readonly RppsKind[] = ['activity', 'savoirFaire', 'diploma'];
const BATCH_CHARS = 1 << 18;
const QUIRK_STREAM = 70;

/** The date of a day's extraction, counted from the generator's reference date. */
const dateOf = (day: number) => new Date(REFERENCE_MS + day * 86_400_000);

/** `YYYYMMDDhhmm` of a day's extraction, as in the published file names. */
export function stampOf(day: number): string {
  return dateOf(day).toISOString().slice(0, 10).replace(/-/g, '') + '0000';
}

export function openDataFileName(kind: FileKind, stamp: string): string {
  return `PS_LibreAcces_${KINDS[kind].file}_${stamp}.txt`;
}

interface Sink {
  /** a writable for one file; `done` resolves once it is flushed. */
  open(name: string): { out: Writable; done: () => Promise<void> };
  close(): Promise<void>;
}

function folderSink(dir: string): Sink {
  return {
    open(name) {
      const out = fs.createWriteStream(path.join(dir, name), { highWaterMark: 1 << 20 });
      return { out, done: async () => { out.end(); await finished(out); } };
    },
    close: async () => {},
  };
}

/** Entries streamed into one archive, one after the other (yazl reads an entry once the previous one ends). */
function zipSink(file: string, mtime: Date): Sink {
  const zip = new yazl.ZipFile();
  const target = fs.createWriteStream(file);
  zip.outputStream.pipe(target);
  return {
    open(name) {
      const out = new PassThrough({ highWaterMark: 1 << 20 });
      zip.addReadStream(out, name, { mtime });
      return { out, done: async () => { out.end(); await finished(out); } };
    },
    close: async () => {
      zip.end();
      await finished(target);
    },
  };
}

async function write(out: Writable, bytes: Buffer): Promise<void> {
  if (!out.write(bytes)) await once(out, 'drain');
}

/** Writes the day's three extracts; same options and seed, same bytes. */
export async function generateOpenData(options: OpenDataFileOptions): Promise<OpenDataSummary> {
  const model = new OpenDataModel(options);
  const stamp = stampOf(model.day);
  const win1252 = new Set(options.win1252 ?? DEFAULT_QUIRKS.win1252);
  const crlf = new Set(options.crlf ?? DEFAULT_QUIRKS.crlf);
  const duplicateShare = options.duplicateShare ?? DEFAULT_QUIRKS.duplicateShare;
  const badShare = options.badShare ?? DEFAULT_QUIRKS.badShare;
  const sources = new Set(options.sources ?? ['rpps']);
  fs.mkdirSync(options.outDir, { recursive: true });
  const zipPath = options.zip && sources.has('rpps') ? path.join(options.outDir, `PS_LibreAcces_${stamp}.zip`) : undefined;
  const sink = zipPath ? zipSink(zipPath, dateOf(model.day)) : folderSink(options.outDir);
  const lines: Record<RppsKind, () => Iterable<Record<string, string>>> = {
    activity: () => model.activityLines(),
    savoirFaire: () => model.savoirFaireLines(),
    diploma: () => model.diplomaLines(),
  };

  const files: OpenDataFileSummary[] = [];
  for (const [k, kind] of sources.has('rpps') ? ORDER.entries() : []) {
    const columns: readonly ColumnKey[] = kind === 'activity' && options.form52 ? ACTIVITY_COLUMNS_52 : KINDS[kind].columns;
    const idnps = columns.indexOf('idnps');
    const pp = columns.indexOf('identifiantPP');
    const eol = crlf.has(kind) ? '\r\n' : '\n';
    const encoding = win1252.has(kind) ? 'win1252' : 'utf8';
    const summary: OpenDataFileSummary = { kind, name: openDataFileName(kind, stamp), encoding, lines: 0, bytes: 0, duplicates: 0, shortLines: 0, emptyIdLines: 0 };
    const { out, done } = sink.open(summary.name);
    const quirks = new Rng(model.seed, QUIRK_STREAM + k, model.day);
    let batch = columns.map(headerText).join('|') + `|${eol}`;
    const flush = async () => {
      const bytes = encoding === 'win1252' ? iconv.encode(batch, 'win1252') : Buffer.from(batch, 'utf8');
      summary.bytes += bytes.length;
      batch = '';
      await write(out, bytes);
    };
    for (const fields of lines[kind]()) {
      const values = columns.map((c) => fields[c]);
      const line = `${values.join('|')}|${eol}`;
      batch += line;
      summary.lines++;
      if (quirks.chance(duplicateShare)) {
        batch += line;
        summary.lines++;
        summary.duplicates++;
      }
      if (quirks.chance(badShare)) {
        if (quirks.chance(0.5)) {
          batch += `${values.slice(0, -1).join('|')}|${eol}`;
          summary.shortLines++;
        } else {
          batch += `${values.map((v, i) => (i === idnps || i === pp ? '' : v)).join('|')}|${eol}`;
          summary.emptyIdLines++;
        }
        summary.lines++;
      }
      if (batch.length >= BATCH_CHARS) await flush();
    }
    await flush();
    await done();
    files.push(summary);
    options.log?.(`${summary.name}: ${summary.lines} lines (${summary.duplicates} duplicates, ${summary.shortLines + summary.emptyIdLines} bad), ${summary.bytes} bytes, ${encoding}`);
  }
  await sink.close();
  const summary: OpenDataSummary = { day: model.day, stamp, zip: zipPath, files };
  if (sources.has('finess')) {
    const f = (summary.finess = await writeFiness(model, options.outDir, stamp));
    const traps = Object.entries(f.traps).map(([t, n]) => `${t} ${n}`).join(', ');
    options.log?.(`${f.name}: ${f.pmej} legal entities, ${f.ege} establishments (${f.active} in service, ${f.closed} closed), ${f.bytes} bytes gzipped; traps: ${traps}`);
  }
  if (sources.has('mss')) {
    // Like the ANS download, the MSSanté text has an archive of its own.
    const mssZip = options.zip ? path.join(options.outDir, MSS_ZIP) : undefined;
    const mssSink = mssZip ? zipSink(mssZip, dateOf(model.day)) : folderSink(options.outDir);
    const { out, done } = mssSink.open(mssFileName(stamp));
    const m = await writeMss(model, out, mssFileName(stamp), options.mssHeaderVariant);
    await done();
    await mssSink.close();
    summary.mss = { ...m, zip: mssZip };
    const traps = Object.entries(m.traps).map(([t, n]) => `${t} ${n}`).join(', ');
    options.log?.(`${m.name}${mssZip ? ` in ${MSS_ZIP}` : ''}: ${m.lines} lines (${m.per} PER, ${m.org} ORG mailboxes), ${m.header} header, ${m.bytes} bytes; traps: ${traps}`);
  }
  return summary;
}
