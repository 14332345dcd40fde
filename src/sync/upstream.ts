import { RESOURCE_TYPES, type ResourceType } from '../registry/index.ts';
import { SyncError } from './client.ts';

/** What a mirror run asks of the upstream for one type, read from its CapabilityStatement. */
export interface TypePlan {
  type: ResourceType;
  /** the upstream sorts this type by `_lastUpdated` (`_sort`): a run's pages come oldest first. */
  sorted: boolean;
  /** `_revinclude` values asked with each page (the types only reachable that way). */
  revinclude: string[];
}

export const DEFAULT_TYPES: ResourceType[] = ['Practitioner', 'Organization', 'PractitionerRole'];
/** Types mirrored through `_revinclude` on Organization when the upstream offers it and they are not asked for. */
const REVINCLUDED: { type: ResourceType; param: string }[] = [
  { type: 'Location', param: 'Location:organization' },
  { type: 'Device', param: 'Device:organization' },
  { type: 'HealthcareService', param: 'HealthcareService:organization' },
];

interface CapResource {
  type?: string;
  interaction?: { code?: string }[];
  searchParam?: { name?: string; documentation?: string }[];
  searchRevInclude?: string[];
}

/** The types `--types` names, or a message naming the one this server cannot store. */
export function parseTypes(value: string): ResourceType[] {
  const types = [...new Set(value.split(',').map((s) => s.trim()).filter(Boolean))];
  if (types.length === 0) throw new SyncError('--types names no type');
  for (const t of types) {
    if (!(RESOURCE_TYPES as readonly string[]).includes(t)) throw new SyncError(`--types: unknown type "${t}" (accepted: ${RESOURCE_TYPES.join(', ')})`);
  }
  return types as ResourceType[];
}

/**
 * One plan per type asked for, in that order; `notes` says what the upstream does not offer. A
 * type the upstream does not search is refused, unless it comes through `_revinclude` on
 * Organization (Device, HealthcareService).
 */
export function planTypes(capability: unknown, wanted: ResourceType[]): { plans: TypePlan[]; notes: string[] } {
  const c = capability as { resourceType?: string; rest?: { mode?: string; resource?: CapResource[]; searchParam?: { name?: string }[] }[] } | null;
  if (c?.resourceType !== 'CapabilityStatement') throw new SyncError('the upstream\'s metadata is not a CapabilityStatement');
  const rest = c.rest?.find((r) => r.mode === 'server') ?? c.rest?.[0];
  const resources = new Map((rest?.resource ?? []).map((r) => [r.type, r]));
  const searchable = (t: string) => resources.get(t)?.interaction?.some((i) => i.code === 'search-type') ?? false;
  const globalSort = rest?.searchParam?.some((p) => p.name === '_sort') ?? false;
  const sorts = (t: string) => {
    const p = resources.get(t)?.searchParam?.find((s) => s.name === '_sort');
    return p ? p.documentation === undefined || p.documentation.includes('_lastUpdated') : globalSort;
  };
  const orgRevinclude = resources.get('Organization')?.searchRevInclude ?? [];
  const notes: string[] = [];
  const plans: TypePlan[] = [];
  const viaOrganization: string[] = [];
  for (const type of wanted) {
    if (searchable(type)) {
      plans.push({ type, sorted: sorts(type), revinclude: [] });
      if (!sorts(type)) notes.push(`${type}: the upstream does not sort by _lastUpdated; each run's window is read in its own order`);
      continue;
    }
    const via = REVINCLUDED.find((r) => r.type === type);
    if (via && orgRevinclude.includes(via.param) && (wanted.includes('Organization') || searchable('Organization'))) viaOrganization.push(via.param);
    else throw new SyncError(`${type}: the upstream does not search this type${via ? ` nor include it through _revinclude=${via.param}` : ''}`);
  }
  // Not asked for: mirrored by their own search when the upstream has one, else with Organization.
  for (const r of REVINCLUDED) {
    if (wanted.includes(r.type) || !wanted.includes('Organization')) continue;
    if (searchable(r.type)) plans.push({ type: r.type, sorted: sorts(r.type), revinclude: [] });
    else if (orgRevinclude.includes(r.param)) viaOrganization.push(r.param);
  }
  if (viaOrganization.length) {
    let org = plans.find((p) => p.type === 'Organization');
    if (!org) {
      org = { type: 'Organization', sorted: sorts('Organization'), revinclude: [] };
      plans.push(org);
      notes.push('Organization: mirrored too, to reach the types included with it');
    }
    org.revinclude.push(...viaOrganization);
    notes.push(`${viaOrganization.map((v) => v.split(':')[0]).join(', ')}: mirrored with the Organizations that refer to them (_revinclude); one changed alone is seen when its Organization changes`);
  }
  return { plans, notes };
}
