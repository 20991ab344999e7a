/**
 * A procedure result that is a file rather than a JSON value: the REST adapter streams `body`
 * as an attachment, so a large export never sits in memory. `invoke` passes it through
 * without the output check; the procedure's `output` schema documents what the file holds.
 */
export class Download {
  constructor(
    readonly filename: string,
    readonly contentType: string,
    readonly body: AsyncIterable<string>,
  ) {}
}
