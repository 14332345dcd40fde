/**
 * Errors as FHIR OperationOutcomes with one status mapping. Anything thrown that is not a FhirError
 * is an internal error: the client gets a generic 500 outcome, never the message or a stack.
 */
export type IssueType =
  | 'invalid' | 'value' | 'not-supported' | 'not-found' | 'security' | 'login' | 'forbidden'
  | 'throttled' | 'too-long' | 'too-costly' | 'timeout' | 'exception' | 'processing' | 'informational' | 'transient';

export interface Issue {
  severity: 'fatal' | 'error' | 'warning' | 'information';
  code: IssueType;
  diagnostics: string;
  expression?: string[];
}

export interface OperationOutcome {
  resourceType: 'OperationOutcome';
  issue: Issue[];
}

export class FhirError extends Error {
  constructor(
    readonly status: number,
    readonly code: IssueType,
    message: string,
    readonly headers: Record<string, string> = {},
    readonly expression?: string[],
  ) {
    super(message);
  }

  get outcome(): OperationOutcome {
    return outcome('error', this.code, this.message, this.expression);
  }
}

export function outcome(severity: Issue['severity'], code: IssueType, diagnostics: string, expression?: string[]): OperationOutcome {
  return { resourceType: 'OperationOutcome', issue: [{ severity, code, diagnostics, ...(expression ? { expression } : {}) }] };
}

export const badRequest = (message: string, param?: string) =>
  new FhirError(400, 'invalid', message, {}, param ? [param] : undefined);
export const notSupported = (message: string, param?: string) =>
  new FhirError(400, 'not-supported', message, {}, param ? [param] : undefined);
export const notFound = (message: string) => new FhirError(404, 'not-found', message);
