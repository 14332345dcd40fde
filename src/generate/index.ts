// The generator entry point: plan the counts from the scale, then write the six NDJSON files in
// dependency order (Organization, Location, Practitioner, PractitionerRole, Device,
// HealthcareService). Locations are made with their Organizations: their count follows.

import fs from 'node:fs';
import path from 'node:path';
import { devices } from './device.ts';
import { healthcareServices } from './healthcare-service.ts';
import { newOrgIndex, organizations } from './organization.ts';
import { newPractitionerIndex, practitioners } from './practitioner.ts';
import { practitionerRoles } from './practitioner-role.ts';
import { NdjsonWriter, writeAll } from './writer.ts';

export const RESOURCE_TYPES = ['Organization', 'Location', 'Practitioner', 'PractitionerRole', 'Device', 'HealthcareService'] as const;
export type ResourceType = (typeof RESOURCE_TYPES)[number];
/** The types whose count is planned from the scale (a Location is one per geographical entity with a point). */
export type PlannedType = Exclude<ResourceType, 'Location'>;
const PLANNED_TYPES = RESOURCE_TYPES.filter((t): t is PlannedType => t !== 'Location');

/** Counts at scale 1 (national). Device ≈ 3 % and HealthcareService ≈ 10 % of the geographical entities. */
export const NATIONAL_COUNTS: Record<PlannedType, number> = {
  Organization: 500_000,
  Practitioner: 1_800_000,
  PractitionerRole: 2_200_000,
  Device: 3_300,
  HealthcareService: 11_000,
};

/** Above this, RPPS activity numbers (10^8) and FINESS serials per department (10^6) could run out. */
export const MAX_SCALE = 40;

export function plannedCounts(scale: number): Record<PlannedType, number> {
  if (!(scale > 0) || scale > MAX_SCALE) throw new RangeError(`scale must be > 0 and <= ${MAX_SCALE}`);
  const c = {} as Record<PlannedType, number>;
  for (const t of PLANNED_TYPES) c[t] = Math.max(1, Math.round(NATIONAL_COUNTS[t] * scale));
  // Every practitioner has at least one role.
  c.PractitionerRole = Math.max(c.PractitionerRole, c.Practitioner);
  return c;
}

export function fileName(type: ResourceType, gzip: boolean): string {
  return `${type}.ndjson${gzip ? '.gz' : ''}`;
}

export type GenerateOptions = {
  scale: number;
  seed: number;
  outDir: string;
  gzip?: boolean;
  /** Progress lines (one per finished file). */
  log?: (line: string) => void;
};

export type FileSummary = { type: ResourceType; path: string; count: number; bytes: number; fileBytes: number; ms: number };

export type GenerateSummary = {
  scale: number;
  seed: number;
  gzip: boolean;
  files: FileSummary[];
  totalResources: number;
  totalBytes: number;
  totalFileBytes: number;
  elapsedMs: number;
  resourcesPerSecond: number;
};

export async function generate(options: GenerateOptions): Promise<GenerateSummary> {
  const { scale, outDir } = options;
  const seed = options.seed >>> 0;
  const gzip = options.gzip ?? false;
  const log = options.log ?? (() => {});
  const counts = plannedCounts(scale);
  fs.mkdirSync(outDir, { recursive: true });

  const orgIndex = newOrgIndex(counts.Organization);
  const practIndex = newPractitionerIndex(counts.Practitioner);
  const locations: string[] = [];
  const streams: Record<PlannedType, () => Iterable<string>> = {
    Organization: () => organizations(seed, counts.Organization, orgIndex, (json) => locations.push(json)),
    Practitioner: () => practitioners(seed, counts.Practitioner, practIndex),
    PractitionerRole: () => practitionerRoles(seed, counts.PractitionerRole, practIndex, orgIndex),
    Device: () => devices(seed, counts.Device, orgIndex),
    HealthcareService: () => healthcareServices(seed, counts.HealthcareService, orgIndex),
  };

  const started = performance.now();
  const files: FileSummary[] = [];
  for (const type of PLANNED_TYPES) {
    const t0 = performance.now();
    const writers = [type, ...(type === 'Organization' ? ['Location' as const] : [])].map((t) => ({ type: t, writer: new NdjsonWriter(path.join(outDir, fileName(t, gzip)), gzip) }));
    await writeAll(writers[0].writer, streams[type](), writers[1] && { writer: writers[1].writer, queue: locations });
    for (const { type: t, writer } of writers) {
      const fileBytes = await writer.close();
      const ms = performance.now() - t0;
      files.push({ type: t, path: writer.path, count: writer.count, bytes: writer.bytes, fileBytes, ms });
      log(`${t}: ${writer.count} resources, ${formatBytes(fileBytes)} in ${(ms / 1000).toFixed(1)} s`);
    }
  }
  const elapsedMs = performance.now() - started;
  const totalResources = files.reduce((s, f) => s + f.count, 0);
  return {
    scale,
    seed,
    gzip,
    files,
    totalResources,
    totalBytes: files.reduce((s, f) => s + f.bytes, 0),
    totalFileBytes: files.reduce((s, f) => s + f.fileBytes, 0),
    elapsedMs,
    resourcesPerSecond: totalResources / Math.max(elapsedMs / 1000, 1e-9),
  };
}

export function formatBytes(n: number): string {
  if (n >= 1024 ** 3) return `${(n / 1024 ** 3).toFixed(2)} GiB`;
  if (n >= 1024 ** 2) return `${(n / 1024 ** 2).toFixed(1)} MiB`;
  if (n >= 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${n} B`;
}

/** Human-readable summary (the CLI prints it to stderr). */
export function formatSummary(s: GenerateSummary): string {
  const lines = [`Generated scale=${s.scale} seed=${s.seed}${s.gzip ? ' (gzip)' : ''}:`];
  for (const f of s.files) {
    const size = s.gzip ? `${formatBytes(f.fileBytes)} (${formatBytes(f.bytes)} uncompressed)` : formatBytes(f.fileBytes);
    lines.push(`  ${f.type.padEnd(18)} ${String(f.count).padStart(10)}  ${size}`);
  }
  lines.push(
    `  ${'total'.padEnd(18)} ${String(s.totalResources).padStart(10)}  ${formatBytes(s.totalFileBytes)}`,
    `  elapsed ${(s.elapsedMs / 1000).toFixed(2)} s, ${Math.round(s.resourcesPerSecond).toLocaleString('en-US')} resources/s, ` +
      `${(s.totalBytes / 1024 ** 2 / Math.max(s.elapsedMs / 1000, 1e-9)).toFixed(1)} MiB/s (uncompressed)`,
  );
  return lines.join('\n');
}
