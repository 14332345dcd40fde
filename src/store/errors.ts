/**
 * The failures storage reports (src/store/): typed, never an HTTP status. The HTTP layer
 * (src/app.ts `storageFailure`) alone turns them, and the driver's failures (src/db-errors.ts),
 * into answers.
 */

/** A statement of a search's page was cancelled by its statement timeout: a narrower search may not be. */
export class SearchTimedOut extends Error {
  constructor(options?: ErrorOptions) {
    super('a statement of the page ran past the statement timeout', options);
    this.name = 'SearchTimedOut';
  }
}

/** A search or read did not settle within its deadline, whatever the driver still waits for. */
export class DeadlineExceeded extends Error {
  constructor(readonly ms: number) {
    super(`no answer from the database within ${ms} ms`);
    this.name = 'DeadlineExceeded';
  }
}
