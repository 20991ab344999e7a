import { readFileSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';

/**
 * The collection a session's memories go to (docs/hooks.md, "Which collection"): ORGMEM_COLLECTION
 * when set, else the project's name from its git remote `origin` (`owner-repo`), else the name of
 * its git top directory, else of the working directory. Read from `.git` directly: no `git`
 * process, which would cost more than the rest of the hook's start.
 */
export function projectCollection(cwd) {
  const named = process.env.ORGMEM_COLLECTION;
  if (named) return validName(named);
  const top = gitTop(cwd);
  const remote = top ? originUrl(top) : undefined;
  return validName(remote ? remoteName(remote) : basename(top ?? resolve(cwd)));
}

/** The nearest directory at or above `dir` that holds `.git`. */
function gitTop(dir) {
  for (let d = resolve(dir); ; d = dirname(d)) {
    try {
      statSync(join(d, '.git'));
      return d;
    } catch {
      if (dirname(d) === d) return undefined;
    }
  }
}

/** The url of remote "origin" in the repository's config; a worktree's `.git` file points to it. */
function originUrl(top) {
  try {
    let gitDir = join(top, '.git');
    if (statSync(gitDir).isFile()) {
      const pointer = /^gitdir:\s*(.+)$/m.exec(readFileSync(gitDir, 'utf8'))?.[1]?.trim();
      if (!pointer) return undefined;
      gitDir = isAbsolute(pointer) ? pointer : resolve(top, pointer);
      const common = readOptional(join(gitDir, 'commondir'))?.trim();
      if (common) gitDir = isAbsolute(common) ? common : resolve(gitDir, common);
    }
    const config = readFileSync(join(gitDir, 'config'), 'utf8');
    const section = /^\s*\[remote\s+"origin"\]\s*$([\s\S]*?)(?=^\s*\[|(?![\s\S]))/m.exec(config)?.[1];
    return section ? /^\s*url\s*=\s*(.+?)\s*$/m.exec(section)?.[1] : undefined;
  } catch {
    return undefined;
  }
}

function readOptional(path) {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** `owner-repo` from https://host/owner/repo(.git), git@host:owner/repo.git, ssh://... */
function remoteName(url) {
  const path = url
    .replace(/\.git\/?$/, '')
    .replace(/\/+$/, '')
    .replace(/^[a-z+]+:\/\/[^/]+\//i, '')
    .replace(/^[^@/]+@[^:]+:/, '');
  return path.split('/').filter(Boolean).slice(-2).join('-');
}

/** A valid collection name (A-Z a-z 0-9 . _ -, 1 to 64, not starting with "."). */
function validName(raw) {
  const name = raw
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[.-]+/, '')
    .slice(0, 64);
  return name || 'default';
}
