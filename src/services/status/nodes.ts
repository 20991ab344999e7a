import type { Db } from '../../ports/db/db.ts';

/*
 * The nodes of a Citus cluster (docs/citus.md), as the coordinator's metadata lists them, each
 * probed with a `select 1` run on it. The probe is bounded (a node that does not answer fails it,
 * it does not hold the status answer) and runs on every active node at once; an inactive node is
 * not probed and counts as unreachable. On plain PostgreSQL and PGlite the list is empty.
 */

/** How long the probe of the nodes may take, connecting included. */
const PROBE_TIMEOUT_MS = 3_000;

export interface CitusNode {
  host: string;
  port: number;
  /** 'coordinator' (group 0) or 'worker'. */
  role: 'coordinator' | 'worker';
  active: boolean;
  reachable: boolean;
}

export async function citusNodes(db: Db): Promise<CitusNode[]> {
  const [ext] = await db.query<{ on: boolean }>(`select exists (select 1 from pg_extension where extname = 'citus') as on`);
  if (!ext!.on) return [];
  const nodes = await db.query<{ id: number; host: string; port: number; coordinator: boolean; active: boolean }>(
    `select nodeid as id, nodename as host, nodeport as port, groupid = 0 as coordinator, isactive as active
       from pg_dist_node where noderole = 'primary' order by groupid, nodeid`,
  );
  const answered = await db
    .transaction(async (tx) => {
      await tx.exec(`set local statement_timeout = ${PROBE_TIMEOUT_MS}; set local citus.node_connection_timeout = ${PROBE_TIMEOUT_MS}`);
      return tx.query<{ id: number }>(`select nodeid as id from run_command_on_all_nodes('select 1') where success`);
    })
    .catch(() => []);
  const up = new Set(answered.map((r) => r.id));
  return nodes.map((n) => ({
    host: n.host,
    port: n.port,
    role: n.coordinator ? 'coordinator' : 'worker',
    active: n.active,
    reachable: n.active && up.has(n.id),
  }));
}

const label = (v: string) => v.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n');

/** The nodes as Prometheus gauges (text format 0.0.4): up 1 or 0 per node; nothing when there are none. */
export function nodesPrometheus(nodes: CitusNode[]): string {
  if (!nodes.length) return '';
  const lines = nodes.map((n) => `orgmem_citus_node_up{host="${label(n.host)}",port="${n.port}",role="${n.role}",active="${n.active}"} ${n.reachable ? 1 : 0}`);
  return ['# HELP orgmem_citus_node_up The Citus node answered a select 1 within 3 s (1) or not (0)', '# TYPE orgmem_citus_node_up gauge', ...lines, ''].join(
    '\n',
  );
}
