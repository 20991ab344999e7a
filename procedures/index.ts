import type { AnyProcedure } from '../src/pipeline/procedure.ts';
import accountRecoverKey from './account.recover-key.ts';
import accountReveal from './account.reveal.ts';
import accountSignup from './account.signup.ts';
import adminAnalytics from './admin.analytics.ts';
import adminAudit from './admin.audit.ts';
import adminConnectors from './admin.connectors.ts';
import adminConnectorsStatus from './admin.connectors-status.ts';
import adminCreateTenant from './admin.create-tenant.ts';
import adminDeleteAccount from './admin.delete-account.ts';
import adminExport from './admin.export.ts';
import adminImport from './admin.import.ts';
import adminImportStatus from './admin.import-status.ts';
import adminMe from './admin.me.ts';
import adminMemoryHealth from './admin.memory-health.ts';
import adminMetrics from './admin.metrics.ts';
import adminMetricsPrometheus from './admin.metrics-prometheus.ts';
import adminRotateKey from './admin.rotate-key.ts';
import adminStats from './admin.stats.ts';
import adminUsage from './admin.usage.ts';
import agentsList from './agents.list.ts';
import billingCheckout from './billing.checkout.ts';
import billingPortal from './billing.portal.ts';
import billingWebhook from './billing.webhook.ts';
import changesetsApply from './changesets.apply.ts';
import changesetsGet from './changesets.get.ts';
import changesetsList from './changesets.list.ts';
import changesetsReject from './changesets.reject.ts';
import changesetsUndo from './changesets.undo.ts';
import collectionsCreate from './collections.create.ts';
import collectionsDelete from './collections.delete.ts';
import collectionsGet from './collections.get.ts';
import collectionsList from './collections.list.ts';
import collectionsUpdate from './collections.update.ts';
import connectionsCreate from './connections.create.ts';
import connectionsDelete from './connections.delete.ts';
import connectionsGet from './connections.get.ts';
import connectionsList from './connections.list.ts';
import connectionsOauthCallback from './connections.oauth-callback.ts';
import connectionsOauthStart from './connections.oauth-start.ts';
import connectionsProviders from './connections.providers.ts';
import connectionsRuns from './connections.runs.ts';
import connectionsSync from './connections.sync.ts';
import consolidationGetConfig from './consolidation.get-config.ts';
import consolidationPutConfig from './consolidation.put-config.ts';
import consolidationRun from './consolidation.run.ts';
import contextAll from './context.all.ts';
import contextCollection from './context.collection.ts';
import databaseDeleteConfig from './database.delete-config.ts';
import databaseGetConfig from './database.get-config.ts';
import databasePutConfig from './database.put-config.ts';
import extractionDeleteConfig from './extraction.delete-config.ts';
import extractionGetConfig from './extraction.get-config.ts';
import extractionPutConfig from './extraction.put-config.ts';
import grantsDelete from './grants.delete.ts';
import grantsList from './grants.list.ts';
import grantsPut from './grants.put.ts';
import graphContradictions from './graph.contradictions.ts';
import graphRetractions from './graph.retractions.ts';
import graphExtractJob from './graph.extract-job.ts';
import graphProfile from './graph.profile.ts';
import graphRemember from './graph.remember.ts';
import graphRetryJob from './graph.retry-job.ts';
import graphSummary from './graph.summary.ts';
import hygieneArchiveStale from './hygiene.archive-stale.ts';
import hygieneDedup from './hygiene.dedup.ts';
import hygieneHealth from './hygiene.health.ts';
import identityDeleteConfig from './identity.delete-config.ts';
import identityGetConfig from './identity.get-config.ts';
import identityPutConfig from './identity.put-config.ts';
import ledgerList from './ledger.list.ts';
import ledgerMemory from './ledger.memory.ts';
import keysCreate from './keys.create.ts';
import keysList from './keys.list.ts';
import keysRevoke from './keys.revoke.ts';
import keysSetRole from './keys.set-role.ts';
import oauthConsent from './oauth.consent.ts';
import oauthDecide from './oauth.decide.ts';
import dropComplete from './drop.complete.ts';
import emailAddress from './email.address.ts';
import emailInbound from './email.inbound.ts';
import emailPutSenders from './email.put-senders.ts';
import emailRotateAddress from './email.rotate-address.ts';
import emailSenders from './email.senders.ts';
import dropFiles from './drop.files.ts';
import dropPresign from './drop.presign.ts';
import ingestBatch from './ingest.batch.ts';
import internalCreateKey from './internal.create-key.ts';
import internalCreateTenant from './internal.create-tenant.ts';
import internalEmbed from './internal.embed.ts';
import memoriesArchive from './memories.archive.ts';
import memoriesAttach from './memories.attach.ts';
import memoriesBulk from './memories.bulk.ts';
import memoriesCreate from './memories.create.ts';
import memoriesDelete from './memories.delete.ts';
import memoriesDetach from './memories.detach.ts';
import memoriesFolder from './memories.folder.ts';
import memoriesForget from './memories.forget.ts';
import memoriesGet from './memories.get.ts';
import memoriesHistory from './memories.history.ts';
import memoriesList from './memories.list.ts';
import memoriesMove from './memories.move.ts';
import memoriesPin from './memories.pin.ts';
import memoriesRelated from './memories.related.ts';
import memoriesRetract from './memories.retract.ts';
import memoriesUnretract from './memories.unretract.ts';
import memoriesUpdate from './memories.update.ts';
import memoriesUpload from './memories.upload.ts';
import quarantineGetPolicy from './quarantine.get-policy.ts';
import quarantineList from './quarantine.list.ts';
import quarantinePutPolicy from './quarantine.put-policy.ts';
import quarantineReject from './quarantine.reject.ts';
import quarantineRelease from './quarantine.release.ts';
import peopleList from './people.list.ts';
import peopleInvite from './people.invite.ts';
import peopleUpdate from './people.update.ts';
import peopleRemove from './people.remove.ts';
import teamsList from './teams.list.ts';
import teamsCreate from './teams.create.ts';
import teamsUpdate from './teams.update.ts';
import teamsDelete from './teams.delete.ts';
import teamsPutMember from './teams.put-member.ts';
import teamsDeleteMember from './teams.delete-member.ts';
import promotionsPropose from './promotions.propose.ts';
import promotionsList from './promotions.list.ts';
import promotionsGet from './promotions.get.ts';
import promotionsAccept from './promotions.accept.ts';
import promotionsReject from './promotions.reject.ts';
import promotionsWithdraw from './promotions.withdraw.ts';
import proxyChatCompletions from './proxy.chat-completions.ts';
import proxyCountTokens from './proxy.count-tokens.ts';
import proxyGetConfig from './proxy.get-config.ts';
import proxyMessages from './proxy.messages.ts';
import proxyPutConfig from './proxy.put-config.ts';
import proxyResponses from './proxy.responses.ts';
import spendCapGet from './spend-cap.get.ts';
import spendCapPut from './spend-cap.put.ts';
import searchAll from './search.all.ts';
import searchCollection from './search.collection.ts';
import storageDeleteConfig from './storage.delete-config.ts';
import storageGetConfig from './storage.get-config.ts';
import storagePutConfig from './storage.put-config.ts';
import systemHealth from './system.health.ts';
import systemPulse from './system.pulse.ts';
import systemStatus from './system.status.ts';
import systemTrack from './system.track.ts';
import webhookDeadLetters from './webhook.dead-letters.ts';
import webhookDelete from './webhook.delete.ts';
import webhookGet from './webhook.get.ts';
import webhookPut from './webhook.put.ts';
import webhookReplay from './webhook.replay.ts';
import webhookResume from './webhook.resume.ts';
import webhookTest from './webhook.test.ts';

/**
 * The catalogue: every operation of the service, grouped as `resource.verb`. The grouping is
 * the tRPC router's shape; `procedures` is the flat list the other front ends walk.
 */
export const catalogue = {
  collections: {
    list: collectionsList,
    create: collectionsCreate,
    get: collectionsGet,
    update: collectionsUpdate,
    delete: collectionsDelete,
  },
  memories: {
    create: memoriesCreate,
    bulk: memoriesBulk,
    list: memoriesList,
    get: memoriesGet,
    update: memoriesUpdate,
    delete: memoriesDelete,
    move: memoriesMove,
    pin: memoriesPin,
    archive: memoriesArchive,
    retract: memoriesRetract,
    unretract: memoriesUnretract,
    related: memoriesRelated,
    history: memoriesHistory,
    forget: memoriesForget,
    upload: memoriesUpload,
    folder: memoriesFolder,
    attach: memoriesAttach,
    detach: memoriesDetach,
  },
  drop: { files: dropFiles, presign: dropPresign, complete: dropComplete },
  ingest: { batch: ingestBatch },
  connections: {
    create: connectionsCreate,
    list: connectionsList,
    providers: connectionsProviders,
    get: connectionsGet,
    delete: connectionsDelete,
    sync: connectionsSync,
    runs: connectionsRuns,
    oauthStart: connectionsOauthStart,
    oauthCallback: connectionsOauthCallback,
  },
  email: { address: emailAddress, rotateAddress: emailRotateAddress, senders: emailSenders, putSenders: emailPutSenders, inbound: emailInbound },
  graph: {
    remember: graphRemember,
    extractJob: graphExtractJob,
    retryJob: graphRetryJob,
    contradictions: graphContradictions,
    retractions: graphRetractions,
    profile: graphProfile,
    summary: graphSummary,
  },
  hygiene: { dedup: hygieneDedup, archiveStale: hygieneArchiveStale, health: hygieneHealth },
  consolidation: { run: consolidationRun, getConfig: consolidationGetConfig, putConfig: consolidationPutConfig },
  quarantine: {
    list: quarantineList,
    release: quarantineRelease,
    reject: quarantineReject,
    getPolicy: quarantineGetPolicy,
    putPolicy: quarantinePutPolicy,
  },
  ledger: { list: ledgerList, memory: ledgerMemory },
  changesets: { list: changesetsList, get: changesetsGet, applyChanges: changesetsApply, reject: changesetsReject, undo: changesetsUndo },
  extraction: { getConfig: extractionGetConfig, putConfig: extractionPutConfig, deleteConfig: extractionDeleteConfig },
  spendCap: { get: spendCapGet, put: spendCapPut },
  storage: { getConfig: storageGetConfig, putConfig: storagePutConfig, deleteConfig: storageDeleteConfig },
  database: { getConfig: databaseGetConfig, putConfig: databasePutConfig, deleteConfig: databaseDeleteConfig },
  identity: { getConfig: identityGetConfig, putConfig: identityPutConfig, deleteConfig: identityDeleteConfig },
  grants: { put: grantsPut, list: grantsList, delete: grantsDelete },
  agents: { list: agentsList },
  people: { list: peopleList, invite: peopleInvite, update: peopleUpdate, remove: peopleRemove },
  teams: { list: teamsList, create: teamsCreate, update: teamsUpdate, delete: teamsDelete, putMember: teamsPutMember, deleteMember: teamsDeleteMember },
  promotions: {
    propose: promotionsPropose,
    list: promotionsList,
    get: promotionsGet,
    accept: promotionsAccept,
    reject: promotionsReject,
    withdraw: promotionsWithdraw,
  },
  search: { collection: searchCollection, all: searchAll },
  context: { collection: contextCollection, all: contextAll },
  proxy: {
    chatCompletions: proxyChatCompletions,
    messages: proxyMessages,
    countTokens: proxyCountTokens,
    responses: proxyResponses,
    getConfig: proxyGetConfig,
    putConfig: proxyPutConfig,
  },
  keys: { list: keysList, create: keysCreate, revoke: keysRevoke, setRole: keysSetRole },
  oauth: { consent: oauthConsent, decide: oauthDecide },
  webhook: {
    get: webhookGet,
    put: webhookPut,
    delete: webhookDelete,
    resume: webhookResume,
    test: webhookTest,
    deadLetters: webhookDeadLetters,
    replay: webhookReplay,
  },
  billing: { checkout: billingCheckout, portal: billingPortal, webhook: billingWebhook },
  account: { signup: accountSignup, recoverKey: accountRecoverKey, reveal: accountReveal },
  admin: {
    me: adminMe,
    rotateKey: adminRotateKey,
    createTenant: adminCreateTenant,
    stats: adminStats,
    export: adminExport,
    import: adminImport,
    importStatus: adminImportStatus,
    deleteAccount: adminDeleteAccount,
    audit: adminAudit,
    connectors: adminConnectors,
    connectorsStatus: adminConnectorsStatus,
    usage: adminUsage,
    memoryHealth: adminMemoryHealth,
    metrics: adminMetrics,
    metricsPrometheus: adminMetricsPrometheus,
    analytics: adminAnalytics,
  },
  internal: { embed: internalEmbed, createKey: internalCreateKey, createTenant: internalCreateTenant },
  system: { health: systemHealth, status: systemStatus, pulse: systemPulse, track: systemTrack },
} as const;

export const procedures: AnyProcedure[] = Object.values(catalogue).flatMap((group) => Object.values(group) as AnyProcedure[]);

type Catalogue = typeof catalogue;
/** A procedure's name: `resource.verb`, its place in the catalogue (and its tRPC path). */
export type ProcedureName = { [G in keyof Catalogue]: `${G}.${keyof Catalogue[G] & string}` }[keyof Catalogue];
/** The procedure of that name, with its input's type. */
export type ProcedureNamed<N extends ProcedureName> = N extends `${infer G extends keyof Catalogue}.${infer V}` ? Catalogue[G][V & keyof Catalogue[G]] : never;
