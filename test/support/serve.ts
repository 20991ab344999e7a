import { spawn } from 'node:child_process';
import { BIN } from './mcp.ts';

/**
 * `orgmem serve --port 0 --no-worker` (with its worker when `worker`) spawned with exactly `env`
 * (which must log at info) from `cwd`: `ready` resolves once it listens, with what it printed so
 * far and its address; `stop` ends it as Ctrl-C does.
 */
export function spawnServe(env: Record<string, string>, cwd: string, { worker = false } = {}) {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', ...(worker ? [] : ['--no-worker'])], { cwd, env });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const ready = new Promise<{ out: string; url: string }>((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      const m = /orgmem listening on (http:\/\/[\d.:]+)/.exec(out);
      if (m) resolve({ out, url: m[1]! });
    });
    child.on('exit', (code) => reject(new Error(`serve exited with ${code}: ${out}${err}`)));
  });
  const stop = () => new Promise<void>((r) => (child.exitCode !== null ? r() : (child.once('exit', () => r()), child.kill('SIGTERM'))));
  return { ready, stop, pid: child.pid!, child };
}
