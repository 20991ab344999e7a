import { useState, type FormEvent } from 'react';
import { useParams, useSearchParams } from 'react-router';
import { rpc } from '../api.ts';
import { CollectionNav } from '../components/CollectionNav.tsx';
import { RememberJobView } from '../components/RememberJob.tsx';
import { ErrorNote } from '../components/ui.tsx';
import { useAction } from '../components/use-api.ts';
import { useSession } from '../session.tsx';

/** The paste-and-remember form: graph.remember answers the job to watch. */
function RememberForm({ collection, onQueued }: { collection: string; onQueued(jobId: string): void }) {
  const [content, setContent] = useState('');
  const [importance, setImportance] = useState('0.5');
  const action = useAction();

  async function submit(e: FormEvent) {
    e.preventDefault();
    const res = await action.run(() => rpc.graph.remember.mutate({ collection, content, ...(importance.trim() && { importance: Number(importance) }) }));
    // Not sync, so the answer is the queued job.
    if (res && 'job_id' in res) {
      setContent('');
      onQueued(res.job_id);
    }
  }

  return (
    <form onSubmit={submit} className="card" aria-label="Remember">
      <p className="muted" style={{ marginTop: 0 }}>
        Paste a conversation turn, a note, anything worth keeping. The service stores it, extracts its facts and replaces the older facts they contradict.
      </p>
      <div className="field">
        <label htmlFor="remember-content">Text to remember</label>
        <textarea id="remember-content" value={content} required maxLength={10_000} onChange={(e) => setContent(e.target.value)} />
      </div>
      <div className="field">
        <label htmlFor="remember-importance">Importance (0 to 1)</label>
        <input
          id="remember-importance"
          type="number"
          min={0}
          max={1}
          step={0.1}
          value={importance}
          onChange={(e) => setImportance(e.target.value)}
          style={{ width: '8rem' }}
        />
      </div>
      <ErrorNote error={action.error} />
      <button type="submit" className="primary" disabled={action.busy}>
        {action.busy ? 'Sending…' : 'Remember'}
      </button>
    </form>
  );
}

/**
 * Remember free text and watch its extraction job to the facts it made, with what each replaced.
 * The job id is kept in the page address, so a reload keeps watching the same job.
 */
export function Remember() {
  const { name = '' } = useParams();
  const { canWrite } = useSession();
  const [params, setParams] = useSearchParams();
  const jobId = params.get('job');

  return (
    <>
      <CollectionNav name={name} />
      {canWrite ? (
        <RememberForm collection={name} onQueued={(id) => setParams({ job: id })} />
      ) : (
        <p className="muted">This key is read-only: it can watch a remember job but not start one.</p>
      )}
      {jobId && <RememberJobView key={jobId} jobId={jobId} />}
    </>
  );
}
