/**
 * A valid example input for every catalogue procedure that takes a collection, so tests
 * generated from the catalogue (the grants matrix) can call each one and expect success.
 * A procedure with `collection` and no entry here fails those tests: add its sample when you
 * add the procedure.
 */

export interface Fixture {
  tenantId: string;
  /** An existing collection holding `memoryId`. */
  collection: string;
  memoryId: string;
  /** A second existing collection (a move target). */
  target: string;
  /** Whom the caller's own grant names: the key making the call, or the team of the person it acts for. */
  agentKeyId: string;
  /** Another active key of the same tenant. */
  otherKeyId: string;
  /** A connection (postgres: stored, never synced by the service) into `collection`. */
  connectionId: string;
  /** A remember job into `collection`; made only for a sample that `needs` it. */
  jobId: string;
  /** An ingest batch (one text file) into `collection`; made only for a sample that `needs` it. */
  batchId: string;
}

/** Collection access states of the grants matrix. */
export type AccessState = 'open' | 'granted-rw' | 'granted-read' | 'not-granted';

export interface Sample {
  input(fx: Fixture): Record<string, unknown>;
  /** The records of the fixture this sample names that are made for it alone (a remember call, a drop). */
  needs?: Array<'jobId' | 'batchId'>;
  /**
   * The REST status when access is allowed, if not the procedure's success status: an allowed
   * call may still find nothing to act on in some states (no grant to remove in an open collection).
   */
  allowedStatus?(state: AccessState): number | undefined;
}

/** A small text file as tRPC and JSON callers send it (REST multipart callers send the same as a part). */
export const textFile = { filename: 'tides.txt', content_type: 'text/plain', data: Buffer.from('Tide tables for the harbour.').toString('base64') };

const NO_CHANGESET = '00000000-0000-4000-8000-00000000c5e7';

export const samples: Record<string, Sample> = {
  'collections.get': { input: (fx) => ({ name: fx.collection }) },
  'collections.update': { input: (fx) => ({ name: fx.collection, description: 'updated by the sample' }) },
  'collections.delete': { input: (fx) => ({ name: fx.collection }) },
  'memories.create': { input: (fx) => ({ collection: fx.collection, text: 'a sample memory about tide tables' }) },
  'memories.bulk': { input: (fx) => ({ collection: fx.collection, items: [{ text: 'first bulk sample' }, { text: 'second bulk sample' }] }) },
  'memories.list': { input: (fx) => ({ collection: fx.collection }) },
  'memories.get': { input: (fx) => ({ collection: fx.collection, id: fx.memoryId }) },
  'memories.update': { input: (fx) => ({ collection: fx.collection, id: fx.memoryId, importance: 0.9 }) },
  'memories.delete': { input: (fx) => ({ collection: fx.collection, id: fx.memoryId }) },
  'memories.move': { input: (fx) => ({ collection: fx.collection, id: fx.memoryId, to_collection: fx.target }) },
  'memories.pin': { input: (fx) => ({ collection: fx.collection, id: fx.memoryId, pinned: true }) },
  'memories.archive': { input: (fx) => ({ collection: fx.collection, id: fx.memoryId, archived: true }) },
  // Ended far ahead, so the fixture stays current for the later cases; unretract (next in the catalogue) undoes it.
  'memories.retract': { input: (fx) => ({ collection: fx.collection, id: fx.memoryId, how: 'ended', at: '2100-01-01T00:00:00Z' }) },
  'memories.unretract': { input: (fx) => ({ collection: fx.collection, id: fx.memoryId }) },
  'memories.related': { input: (fx) => ({ collection: fx.collection, id: fx.memoryId }) },
  'memories.history': { input: (fx) => ({ collection: fx.collection, id: fx.memoryId }) },
  'ledger.memory': { input: (fx) => ({ collection: fx.collection, id: fx.memoryId }) },
  // A threshold no match reaches: the call is allowed and deletes nothing, so later cases keep their fixture.
  'memories.upload': { input: (fx) => ({ collection: fx.collection, files: [textFile] }) },
  'memories.folder': { input: (fx) => ({ collection: fx.collection, files: [textFile] }) },
  'memories.attach': { input: (fx) => ({ collection: fx.collection, id: fx.memoryId, files: [textFile] }) },
  // The fixture memory has no file to remove: an allowed call finds nothing.
  'memories.detach': { input: (fx) => ({ collection: fx.collection, id: fx.memoryId, image_index: '0' }), allowedStatus: () => 404 },
  'drop.files': { input: (fx) => ({ collection: fx.collection, files: [textFile] }) },
  'drop.presign': { input: (fx) => ({ collection: fx.collection, uploads: [{ filename: 'tides.txt', content_type: 'text/plain', size: 28 }] }) },
  // presign never issued the key: the call is allowed and refused with 400 (nothing is queued).
  'drop.complete': {
    input: (fx) => ({
      collection: fx.collection,
      files: [{ key: `${fx.tenantId}/${fx.collection}/0196a1b2-0000-7000-8000-000000000000/tides.txt`, filename: 'tides.txt', mime: 'text/plain', size: 28 }],
    }),
    allowedStatus: () => 400,
  },
  'memories.forget': { input: (fx) => ({ collection: fx.collection, query: 'tide tables', min_score: 1 }) },
  'search.collection': { input: (fx) => ({ collection: fx.collection, query: 'tide tables' }) },
  'search.all': { input: (fx) => ({ collection: fx.collection, query: 'tide tables' }) },
  'context.collection': { input: (fx) => ({ collection: fx.collection, query: 'tide tables', max_tokens: 500 }) },
  'context.all': { input: (fx) => ({ collection: fx.collection, query: 'tide tables', max_tokens: 500 }) },
  'graph.remember': { input: (fx) => ({ collection: fx.collection, content: 'I moved to Lisbon. I prefer green tea.' }) },
  'graph.contradictions': { input: (fx) => ({ collection: fx.collection }) },
  'graph.retractions': { input: (fx) => ({ collection: fx.collection }) },
  'graph.profile': { input: (fx) => ({ collection: fx.collection }) },
  'graph.summary': { input: (fx) => ({ collection: fx.collection }) },
  // Real runs: a dry run is a read (readWhen), and the matrix checks the write permission.
  'hygiene.dedup': { input: (fx) => ({ collection: fx.collection, dry_run: false }) },
  'consolidation.run': { input: (fx) => ({ collection: fx.collection }) },
  'consolidation.getConfig': { input: (fx) => ({ collection: fx.collection }) },
  'consolidation.putConfig': { input: (fx) => ({ collection: fx.collection, schedule: 'weekly' }) },
  // A key of no person proposes nothing (400) once the source's grants let it read: docs/promotion.md.
  'promotions.propose': {
    input: (fx) => ({ memory_ids: [fx.memoryId], from_collection: fx.collection, to_collection: fx.target }),
    allowedStatus: () => 400,
  },
  'changesets.list': { input: (fx) => ({ collection: fx.collection }) },
  // A change set the fixture does not hold: an allowed call finds none (404), a refused one never looks.
  'changesets.get': { input: (fx) => ({ collection: fx.collection, id: NO_CHANGESET }), allowedStatus: () => 404 },
  'changesets.applyChanges': { input: (fx) => ({ collection: fx.collection, id: NO_CHANGESET }), allowedStatus: () => 404 },
  'changesets.reject': { input: (fx) => ({ collection: fx.collection, id: NO_CHANGESET }), allowedStatus: () => 404 },
  'changesets.undo': { input: (fx) => ({ collection: fx.collection, id: NO_CHANGESET, change: NO_CHANGESET }), allowedStatus: () => 404 },
  'hygiene.archiveStale': { input: (fx) => ({ collection: fx.collection, dry_run: false }) },
  'hygiene.health': { input: (fx) => ({ collection: fx.collection }) },
  'grants.put': { input: (fx) => ({ name: fx.collection, agent_key_id: fx.otherKeyId, can_read: true, can_write: true }) },
  'grants.list': { input: (fx) => ({ name: fx.collection }) },
  'connections.create': { input: (fx) => ({ collection: fx.collection, provider: 'postgres', credentials: {}, config: {} }) },
  'connections.get': { input: (fx) => ({ id: fx.connectionId }) },
  'connections.runs': { input: (fx) => ({ id: fx.connectionId }) },
  'connections.delete': { input: (fx) => ({ id: fx.connectionId }) },
  // A postgres connection is run by the tenant: an allowed call gets past the grants to that answer.
  'connections.sync': { input: (fx) => ({ id: fx.connectionId }), allowedStatus: () => 400 },
  // The shared server has no OAuth apps configured: an allowed call gets past the grants to the 503.
  'connections.oauthStart': { input: (fx) => ({ provider: 'notion', collection: fx.collection }), allowedStatus: () => 503 },
  // store (a write) is the default. The shared server has no LLM: an allowed call gets past the
  // grants to the endpoint's resolution (503), a refused one stops at the grants (403).
  'proxy.chatCompletions': { input: (fx) => ({ collection: fx.collection, messages: [{ role: 'user', content: 'tide tables?' }] }), allowedStatus: () => 503 },
  'proxy.responses': { input: (fx) => ({ collection: fx.collection, input: 'tide tables?' }), allowedStatus: () => 503 },
  'proxy.messages': {
    input: (fx) => ({ collection: fx.collection, model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'tide tables?' }] }),
    allowedStatus: () => 503,
  },
  'graph.extractJob': { input: (fx) => ({ job_id: fx.jobId }), needs: ['jobId'] },
  // The job is queued, running or done, never failed: an allowed call gets past the grants to that answer.
  'graph.retryJob': { input: (fx) => ({ job_id: fx.jobId }), needs: ['jobId'], allowedStatus: () => 409 },
  'ingest.batch': { input: (fx) => ({ batch_id: fx.batchId }), needs: ['batchId'] },
  // No request of that id: an answer is decided only once, so the sample denies.
  'oauth.decide': { input: () => ({ request: 'mvar_none', approve: false }) },
  // No collection: its sample gives the generated 404 test (declared-errors) a valid role beside the missing key.
  'keys.setRole': { input: (fx) => ({ key_id: fx.otherKeyId, role: 'agent' }) },
  'grants.delete': {
    // The caller removes its own grant; an open collection has none to remove.
    input: (fx) => ({ name: fx.collection, agent_key_id: fx.agentKeyId }),
    allowedStatus: (state) => (state === 'open' ? 404 : undefined),
  },
};
