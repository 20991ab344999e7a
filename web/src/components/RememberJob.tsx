import { useEffect, useState } from 'react';
import { Link } from 'react-router';
import type { FactOutcome } from '../../../src/schemas/graph.ts';
import { apiError, rpc, seg, type ApiOutput } from '../api.ts';
import { useSession } from '../session.tsx';
import { Busy, ErrorNote, when } from './ui.tsx';
import { useAction, useApi } from './use-api.ts';

type RememberJobState = ApiOutput['graph']['extractJob'];

/** How often an unfinished job is asked about: quick enough to see it move, light on the service. */
const POLL_MS = 500;
/** The service gives a job 3 tries (graph.extract-job.ts). */
const TRIES = 3;

/** Polls the job until it is complete; `restart` polls again (after a retry or a failed read). */
function useRememberJob(jobId: string) {
  const [job, setJob] = useState<RememberJobState>();
  const [error, setError] = useState<string | null>(null);
  const [round, setRound] = useState(0);
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = async () => {
      try {
        const j = await rpc.graph.extractJob.query({ job_id: jobId });
        if (!live) return;
        setJob(j);
        setError(null);
        if (!j.complete) timer = setTimeout(poll, POLL_MS);
      } catch (err) {
        if (live) setError(apiError(err).detail);
      }
    };
    void poll();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [jobId, round]);
  return { job, error, restart: () => setRound((r) => r + 1) };
}

const STEPS = ['queued', 'processing', 'finished'] as const;

/** queued -> processing -> done | failed, as steps a person can follow, with the tries. */
function RememberProgress({ job }: { job: RememberJobState }) {
  const at = job.complete ? 2 : job.state === 'processing' ? 1 : 0;
  return (
    <div>
      <progress max={2} value={at} aria-label="Extraction progress" style={{ width: '100%' }} />
      <ol className="row" style={{ listStyle: 'none', padding: 0, margin: '0.3rem 0' }} aria-label="Steps">
        {STEPS.map((step, i) => (
          <li key={step} aria-current={i === at ? 'step' : undefined} className={i === at ? undefined : 'muted'} style={{ fontWeight: i === at ? 700 : 400 }}>
            {i < at ? '✓ ' : ''}
            {step === 'finished' ? (job.complete ? job.state : 'done') : step}
            {i < STEPS.length - 1 && <span aria-hidden="true"> →</span>}
          </li>
        ))}
      </ol>
      {!job.complete && (
        <Busy
          label={`Extracting facts: ${job.state}${job.attempts > 0 ? `, try ${Math.min(job.attempts + (job.state === 'queued' ? 1 : 0), TRIES)} of ${TRIES}` : ''}…`}
        />
      )}
      {/* Between tries the job is queued again with the last error. */}
      {!job.complete && job.error && <p className="muted">The last try failed: {job.error}. It will be tried again.</p>}
    </div>
  );
}

/** The fact a superseding fact replaced, read from the service (the job only names its id). */
function RememberReplacedFact({ collection, id }: { collection: string; id: string }) {
  const m = useApi(() => rpc.memories.get.query({ collection, id }), [collection, id]);
  if (m.error) return <ErrorNote error={m.error} />;
  if (!m.data) return <span className="muted">Loading…</span>;
  return (
    <span>
      <Link to={`/collections/${seg(collection)}/memories/${seg(id)}`}>{m.data.text}</Link>
      <br />
      <span className="muted">stored {when(m.data.created_at)}</span>
    </span>
  );
}

const RELATION_TEXT: Record<FactOutcome['relation'], string> = {
  new: 'new',
  duplicate: 'duplicate (already stored)',
  supersedes: 'supersedes',
};

function RememberFacts({ job }: { job: RememberJobState }) {
  const c = job.collection;
  if (job.facts.length === 0) return <p className="muted">No facts were stored from this text.</p>;
  return (
    <div className="table-wrap">
      <table>
        <caption className="muted" style={{ textAlign: 'left', padding: '0.3rem 0' }}>
          {job.facts.length} fact(s): {job.facts.filter((f) => f.relation !== 'duplicate').length} stored
        </caption>
        <thead>
          <tr>
            <th scope="col">Fact</th>
            <th scope="col">Type</th>
            <th scope="col">Relation</th>
            <th scope="col">What it replaced</th>
          </tr>
        </thead>
        <tbody>
          {job.facts.map((f, i) => (
            <tr key={`${f.id}-${i}`}>
              <td>
                <Link to={`/collections/${seg(c)}/memories/${seg(f.id)}`}>{f.text}</Link>
                {f.expires_at && <div className="muted">expires {when(f.expires_at)}</div>}
              </td>
              <td>{f.type}</td>
              <td>
                <span className={f.relation === 'supersedes' ? 'badge warn' : 'badge'}>{RELATION_TEXT[f.relation]}</span>
              </td>
              <td>
                {f.relation === 'supersedes' && f.supersedes_id ? (
                  <RememberReplacedFact collection={c} id={f.supersedes_id} />
                ) : (
                  <span className="muted">—</span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Watches one extraction job to its end, then shows what it made; a failed job can be retried. */
export function RememberJobView({ jobId }: { jobId: string }) {
  const { canWrite } = useSession();
  const { job, error, restart } = useRememberJob(jobId);
  const retry = useAction();

  return (
    <section aria-labelledby="remember-job" className="card" style={{ marginTop: '1rem' }}>
      <h2 id="remember-job">Extraction job</h2>
      <p className="muted" style={{ overflowWrap: 'anywhere' }}>
        Job {jobId}
        {job && (
          <>
            {' '}
            · started {when(job.created_at)} · updated {when(job.updated_at)}
          </>
        )}
      </p>
      <ErrorNote error={error} />
      {error && (
        <button type="button" onClick={restart}>
          Check again
        </button>
      )}
      {!job && !error && <Busy label="Reading the job…" />}
      {job && (
        <>
          <RememberProgress job={job} />
          {job.skipped === 'spend_cap' && (
            <p>
              <span className="badge warn">skipped: spend_cap</span> The monthly spend cap is reached: the text was stored as it is and no facts were extracted.
            </p>
          )}
          {job.state === 'failed' && (
            <>
              <p className="error" role="alert">
                Extraction failed after {job.attempts} tries{job.error ? `: ${job.error}` : ''}
              </p>
              {canWrite && (
                <button
                  type="button"
                  disabled={retry.busy}
                  onClick={async () => {
                    if (await retry.run(() => rpc.graph.retryJob.mutate({ job_id: jobId }))) restart();
                  }}
                >
                  Retry the job
                </button>
              )}
              <ErrorNote error={retry.error} />
            </>
          )}
          {job.state === 'done' && (
            <>
              <h3>Facts</h3>
              <RememberFacts job={job} />
            </>
          )}
          <p className="muted">
            The text itself is kept as <Link to={`/collections/${seg(job.collection)}/memories/${seg(job.memory_id)}`}>its own memory</Link>
            {job.state === 'done' && job.facts.length > 0 ? ', archived now that its facts are stored' : ''}.
          </p>
        </>
      )}
    </section>
  );
}
