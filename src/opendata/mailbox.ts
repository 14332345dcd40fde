import { coding as tableCoding } from '../vocabulary/codes.ts';
import { dataTrace, EXT, type DataTrace } from '../vocabulary/extensions.ts';
import { MAILBOX_TYPES, type MailboxType } from '../vocabulary/formats/mssante.ts';
import { URL } from '../vocabulary/systems.ts';
import { MapError, practitionerId } from './map.ts';
import type { MailboxRecord } from './read.ts';

/**
 * The MSSanté extraction's lines as telecoms (the ANS profiles' as-mailbox-mss shape): an email
 * typed MSSANTE (fr-core-contact-point-email-type) with the as-ext-mailbox-mss-metadata extension.
 * A mailbox is a layer of its resource: withMailboxes replaces the MSSANTE telecoms of a resource
 * and leaves everything else as the other sources made it.
 */

type Json = Record<string, unknown>;

/** A mailbox line made ready to stage: its owner and its telecom. */
export interface Mailbox {
  kind: MailboxType;
  /** PER: the person's IDNPS (the Practitioner id). */
  person: string | null;
  /** the structure's identifier value as the line gives it (matched against Organizations' identifiers). */
  structure: string | null;
  address: string;
  telecom: Json;
}

const ADDRESS = /^[^\s@|]+@[^\s@|]+\.[^\s@|]+$/;

/** The mailbox of a line, or the MapError that keeps it out. */
export function mailboxOf(record: MailboxRecord): Mailbox {
  const f = record.fields;
  const kind = f.typeBal.toUpperCase() as MailboxType;
  if (!MAILBOX_TYPES.includes(kind)) throw new MapError(`Type de BAL "${f.typeBal}" is neither PER nor ORG`);
  const address = f.adresseBal.toLowerCase();
  if (!ADDRESS.test(address)) throw new MapError(`Adresse BAL "${f.adresseBal}" is not an e-mail address`);
  const person = kind === 'PER' ? practitionerId(record) : null;
  const structure = f.identificationStructure || null;
  if (kind === 'ORG' && structure === null) throw new MapError('an ORG mailbox without Identification Structure');
  const metadata: Json[] = [{ url: 'type', valueCodeableConcept: { coding: [tableCoding('TRE_R257-TypeBAL', kind, true)] } }];
  const description = [f.raisonSocialeBal, f.enseigneBal].find((v) => v !== '');
  if (kind === 'ORG' && description) metadata.push({ url: 'description', valueString: description });
  if (f.serviceRattachement) metadata.push({ url: 'service', valueString: f.serviceRattachement });
  const digitization = f.dematerialisation.toLowerCase();
  if (digitization === 'true' || digitization === 'false') metadata.push({ url: 'digitization', valueBoolean: digitization === 'true' });
  const telecom = {
    extension: [
      { url: EXT.emailType, valueCoding: { system: URL.r256, code: 'MSSANTE' } },
      { url: EXT.mailboxMetadata, extension: metadata },
    ],
    system: 'email',
    value: address,
    use: 'work',
  };
  return { kind, person, structure, address, telecom };
}

/** Whether a telecom is an MSSanté mailbox (what the MSSanté source owns on a resource). */
export function isMailbox(telecom: unknown): boolean {
  const ext = (telecom as { extension?: { url?: string; valueCoding?: { code?: string } }[] }).extension;
  return Array.isArray(ext) && ext.some((e) => e.url === EXT.emailType && e.valueCoding?.code === 'MSSANTE');
}

const isTrace = (e: { url?: string }) => e.url === EXT.dataTrace;
const systemOf = (t: DataTrace) => t.extension.find((x) => x.url === 'systeme-information') as { valueCode: string } | undefined;

/**
 * `resource` with `mailboxes` (telecoms, in the order given) as its MSSanté telecoms, after its
 * other telecoms, and the MSS data-trace when it has any. Pure: the same inputs give the same JSON.
 */
export function withMailboxes(resource: Json, mailboxes: readonly Json[]): Json {
  const others = ((resource.telecom as unknown[] | undefined) ?? []).filter((t) => !isMailbox(t));
  const telecom = [...others, ...mailboxes];
  const out: Json = { ...resource };
  delete out.telecom;
  const meta = { ...(resource.meta as Json) };
  const traces = ((meta.extension as DataTrace[] | undefined) ?? []).filter((e) => !(isTrace(e) && systemOf(e)?.valueCode === 'MSS'));
  if (mailboxes.length) traces.push(dataTrace('MSS', null));
  meta.extension = traces;
  out.meta = meta;
  if (telecom.length) return insertAfter(out, 'telecom', telecom, ['name', 'alias', 'active', 'identifier']);
  return out;
}

/** `obj` with `key` set to `value`, placed after the first of `after` it has (FHIR's element order). */
function insertAfter(obj: Json, key: string, value: unknown, after: readonly string[]): Json {
  const anchor = after.find((k) => k in obj);
  if (anchor === undefined) return { ...obj, [key]: value };
  const out: Json = {};
  for (const [k, v] of Object.entries(obj)) {
    out[k] = v;
    if (k === anchor) out[key] = value;
  }
  return out;
}
