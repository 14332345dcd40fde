import { READ_TYPES, RESOURCE_TYPES, VERSION_TYPES, type BoundParam, type Registry, type ResourceType, type Version } from '../registry/index.ts';
import { DP_PROFILE } from '../vocabulary/extensions.ts';
import { sortable } from './sort.ts';
import { EARTH_RADIUS_KM } from './types/near.ts';

/**
 * The CapabilityStatement of one API version, derived from the registry: the same table that
 * drives extraction and the compiler, so what is declared is what is served.
 */
const STRING_DOC =
  'String: starts-with after folding case, accents and punctuation (œ→oe, ß→ss, ø→o, ł→l …); :exact compares the stored value as is; :contains finds the folded value anywhere.';
const TOKEN_DOC =
  'Token: code, system|code, |code (no system) or system| ; codes and identifier values are case-sensitive; :not includes resources without a value; ' +
  ':text finds the codes whose label (Coding.display, CodeableConcept.text, or the label the server knows for the code: CodeSystem/$lookup) has a word starting with each word of the value, folded like strings.';
const PHONETIC_DOC =
  'Phonetic: each word of the value matches a word spelled the same (folded like strings), sounding the same in French (Sonnex), or, from 5 letters, one typo away (a letter added, dropped, replaced, or two neighbours swapped); several words all match, or match joined. Without _sort, exact spellings first, then sound-alikes, then typos.';
const DATE_DOC =
  'Date: prefixes eq ne gt lt ge le sa eb ap over [low, high) ranges of the given precision (year … millisecond); a value without a time zone is read in UTC; ap widens the value by 10 % of its distance to now.';
const REF_DOC = 'Reference: id, Type/id or an absolute URL of this server; chained searches (param.child=value) are supported.';
const NEAR_DOC =
  `Near: one point per parameter (a comma is refused; several near parameters are several circles, all required); great-circle distance on a sphere of ${EARTH_RADIUS_KM} km. ` +
  'The first near orders the matches; the others, and a near through a chain or _has, only select.';

/**
 * What every search of every type and version takes besides the registry's parameters: reverse
 * chaining, and the result parameters a client may look for in searchParam (the seed's v1 table
 * lists `_total`). The other result parameters are in rest.documentation.
 */
const BEYOND_REGISTRY: readonly { name: string; type: 'special' | 'string'; documentation: string }[] = [
  {
    name: '_has',
    type: 'special',
    documentation:
      'Reverse chaining: _has:Type:reference:parameter=value selects resources referenced by a Type resource matching parameter=value (e.g. _has:PractitionerRole:organization:role=FON-01). Each _has is evaluated on its own.',
  },
  {
    name: '_total',
    type: 'string',
    documentation:
      'Result parameter: how Bundle.total is given. none: never; estimate: the planner\'s estimate, not an exact count; accurate: the exact count, however long counting takes. Without _total the count is exact when it fits the time budget and omitted past it.',
  },
];

const LOOKUP = {
  name: 'lookup',
  definition: 'http://hl7.org/fhir/OperationDefinition/CodeSystem-lookup',
  documentation:
    'GET [base]/CodeSystem/$lookup?system=…&code=… (or POST a Parameters resource with system and code, or coding): a Parameters resource with name, version (when known) and display, ' +
    'for the code systems shipped with the server (NOS, ANS IG) and every label learned from the data. An unknown system or code answers 404.',
};

const BULK_EXPORT = {
  name: 'export',
  definition: 'http://hl7.org/fhir/uv/bulkdata/OperationDefinition/export',
  documentation:
    'System-level bulk export (FHIR Bulk Data Access): GET or POST [base]/$export with Prefer: respond-async; _type, _since, _outputFormat (application/fhir+ndjson). ' +
    'Answers 202 with the status URL in Content-Location; the manifest lists NDJSON files, downloaded with the same API key.',
};

/** `_sort` and the keys that sort this type (the registry's `sortable`). */
function sortParam(registry: Registry, version: Version, type: ResourceType) {
  const keys = [...registry.names(version, type)].filter(([, { param, prefix }]) => prefix === undefined && sortable(param)).map(([name]) => name).sort();
  return {
    name: '_sort',
    type: 'string',
    documentation:
      `Result parameter: sort keys, comma-separated, - for descending: ${keys.join(', ')}. A string key sorts by the lowest folded value ascending, the highest descending; ` +
      'a resource without a value sorts last either way; ties are broken by the internal key (paging stays keyset). Other keys are left out with a warning entry, or refused (400) with Prefer: handling=strict.',
  };
}

export function capabilityStatement(registry: Registry, version: Version, base: string, softwareVersion: string, date: string) {
  const typeDoc = { token: TOKEN_DOC, string: STRING_DOC, date: DATE_DOC, reference: REF_DOC, special: NEAR_DOC };
  const docOf = (param: BoundParam) => (param.phonetic ? PHONETIC_DOC : typeDoc[param.type]);
  const resources = VERSION_TYPES[version].map((type) => {
    const names = [...registry.names(version, type)].sort(([a], [b]) => a.localeCompare(b));
    const searchParam: { name: string; definition?: string; type: string; documentation: string }[] = names.map(([name, { param, prefix }]) => ({
      name,
      ...(param.definition ? { definition: param.definition } : {}),
      type: param.type,
      documentation:
        prefix !== undefined
          ? `Resources updated at or after the given instant: ${name}=T means ${param.code}=${prefix}T. ${DATE_DOC}`
          : `${param.description} ${docOf(param)}${param.parts ? ` Modifiers :${Object.keys(param.parts).join(', :')} search one part.` : ''}${param.boolean ? ' Values: true, false.' : ''}` +
            (param.instant ? ' The element is an instant: compared as a point, not as the range of its written precision.' : '') +
            (param.impliedSystem ? ` Codes of ${param.impliedSystem}: ${param.impliedSystem}|code is the same as code, |code finds nothing.` : ''),
    }));
    searchParam.push(...BEYOND_REGISTRY, sortParam(registry, version, type));
    const refs = registry.forType(type).filter((p) => p.type === 'reference' && p.target?.length);
    const referrers = RESOURCE_TYPES.flatMap((t) =>
      registry.forType(t).filter((p) => p.type === 'reference' && p.target?.includes(type as ResourceType)),
    );
    const searchInclude = refs.length ? ['*', ...refs.map((p) => `${type}:${p.code}`)] : [];
    const searchRevInclude = referrers.map((p) => `${p.resourceType}:${p.code}`);
    return {
      type,
      profile: DP_PROFILE[type],
      interaction: [{ code: 'read' }, { code: 'search-type' }],
      versioning: 'versioned',
      readHistory: false,
      updateCreate: false,
      referencePolicy: ['literal', 'local'],
      ...(searchInclude.length ? { searchInclude } : {}),
      ...(searchRevInclude.length ? { searchRevInclude } : {}),
      searchParam,
    };
  });
  // Types only included in searches are read by id, where their fullUrls point.
  const readOnly = READ_TYPES[version].filter((type) => !VERSION_TYPES[version].includes(type)).map((type) => ({
    type,
    profile: DP_PROFILE[type],
    interaction: [{ code: 'read' }],
    versioning: 'versioned',
    readHistory: false,
    updateCreate: false,
    documentation: `Read by id only (the fullUrl of an included ${type}); found through _include and _revinclude of the searched types.`,
  }));
  const deprecated = version === 'v1';
  return {
    resourceType: 'CapabilityStatement',
    id: `annuaire-${version}`,
    url: `${base}/metadata`,
    version: softwareVersion,
    name: `AnnuaireSanteFhirSearch${version.toUpperCase()}`,
    title: `Health directory FHIR search API ${version}${deprecated ? ' (deprecated)' : ''}`,
    status: deprecated ? 'retired' : 'active',
    experimental: false,
    date,
    publisher: 'Annuaire FHIR search server',
    description:
      (deprecated
        ? 'Version 1 is deprecated (responses carry a Deprecation header and a Link to the successor version /fhir/v2); it serves Organization only, with the v1 parameter names and code systems. '
        : '') +
      'Search API over the French health directory: Practitioner, Organization and PractitionerRole (Device and HealthcareService are found through _include/_revinclude and read by id in v2). ' +
      'Every request but metadata needs the SERVICE-API-KEY header. Paging: keyset cursors in the next link; _count defaults to the server page size and larger values are clamped to its maximum. ' +
      'Unknown or unsupported parameters are ignored, left out of the self link and named in a warning entry (search.mode outcome) unless Prefer: handling=strict is sent. Time zone of dates without one: UTC.',
    kind: 'instance',
    ...(version === 'v2' ? { instantiates: ['http://hl7.org/fhir/uv/bulkdata/CapabilityStatement/bulk-data'] } : {}),
    software: { name: 'annuaire-fhir', version: softwareVersion },
    implementation: { description: `Health directory FHIR search ${version}`, url: base },
    fhirVersion: '4.0.1',
    format: ['application/fhir+json', 'json'],
    rest: [
      {
        mode: 'server',
        documentation:
          'Result parameters: _count, _total (none | estimate | accurate; by default exact when cheap, omitted when counting exceeds the time budget), _summary (true, text, data, count, false), _elements, _include, _revinclude, _sort (keys per type in its searchParam), _format (JSON only), _pretty. POST [type]/_search and POST [type] with a form body are the same as GET.',
        security: {
          cors: true,
          description: 'An API key in the SERVICE-API-KEY header is required on every interaction except metadata. Missing or invalid keys get 401; too many requests in progress (or per second, where the key has a rate limit) get 429 with Retry-After.',
        },
        resource: [...resources, ...readOnly, { type: 'CodeSystem', profile: 'http://hl7.org/fhir/StructureDefinition/CodeSystem', interaction: [], operation: [LOOKUP] }],
        interaction: [],
        // v2 serves the FHIR Bulk Data system-level export (src/routes/export.ts).
        ...(version === 'v2' ? { operation: [BULK_EXPORT] } : {}),
      },
    ],
  };
}
