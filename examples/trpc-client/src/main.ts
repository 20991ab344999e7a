// Stores two memories through the typed tRPC client, then lists them and the collections.
//   ORGMEM_URL=http://127.0.0.1:8080 ORGMEM_API_KEY=mv_... npm start
import { createTRPCClient, httpBatchLink } from '@trpc/client';
import type { AppRouter } from 'orgmem/trpc';

const url = process.env.ORGMEM_URL ?? 'http://127.0.0.1:8080';
const key = process.env.ORGMEM_API_KEY;
if (!key) throw new Error('Set ORGMEM_API_KEY to an orgmem API key (mv_...)');

const orgmem = createTRPCClient<AppRouter>({
  links: [httpBatchLink({ url: `${url}/trpc`, headers: { authorization: `Bearer ${key}` } })],
});

for (const text of ['Ana prefers oat milk', 'Ben is allergic to peanuts']) {
  const memory = await orgmem.memories.create.mutate({ collection: 'example', text, category: 'preference' });
  console.log(`stored ${memory.id} in ${memory.collection}: ${memory.text}`);
}
for (const memory of await orgmem.memories.list.query({ collection: 'example' })) {
  console.log(`listed ${memory.id}: ${memory.text}`);
}
for (const collection of await orgmem.collections.list.query()) {
  console.log(`collection ${collection.name}: ${collection.memory_count} memories`);
}
