import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { GetPromptResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { catalogue } from '../procedures/index.ts';
import type { App } from '../src/core/context.ts';
import { invoke, type Caller } from '../src/pipeline/invoke.ts';
import type { ContextResponse } from '../src/schemas/context.ts';
import { requestError } from './results.ts';

/** The memory a recall prompt spends, in tokens: enough context without drowning the task. */
const RECALL_TOKENS = 2000;

const userMessage = (text: string): GetPromptResult => ({ messages: [{ role: 'user', content: { type: 'text', text } }] });

/** Two prompts a host offers its user: recall what is known before a task, save what was learned after it. */
export function registerPrompts(server: McpServer, app: App, caller: Caller) {
  server.registerPrompt(
    'recall',
    {
      title: 'Recall context for a task',
      description: 'Search orgmem for what is known about a task and start the conversation with it',
      argsSchema: {
        task: z.string().describe('The task or question to recall context for'),
        collection: z.string().optional().describe('Only this collection (default: every collection you may read)'),
      },
    },
    async ({ task, collection }) => {
      let found: ContextResponse;
      try {
        found = (await invoke(app, catalogue.context.all, caller, { query: task, max_tokens: RECALL_TOKENS, ...(collection ? { collection } : {}) }))
          .output as ContextResponse;
      } catch (err) {
        throw requestError(err);
      }
      const context = found.context || 'orgmem holds no memories that match this task.';
      return userMessage(`Context from orgmem for the task below.\n\n${context}\n\nTask: ${task}`);
    },
  );

  server.registerPrompt(
    'save_learnings',
    {
      title: 'Save what was learned',
      description: 'Ask the model to store what this conversation taught, for later sessions',
      argsSchema: { collection: z.string().optional().describe('Where to store it (default: the collection each topic belongs to)') },
    },
    ({ collection }) =>
      userMessage(
        'Save what was learned in this conversation to orgmem, so that later sessions can use it.\n\n' +
          "1. Pick what is worth keeping: decisions and their reasons, the user's preferences, facts about people, projects " +
          'and systems, and corrections of what was believed before. Leave out small talk, guesses, and secrets such as ' +
          'passwords or API keys.\n' +
          '2. For each topic, call remember with a short, self-contained note (say who and what, and when if it matters) in ' +
          (collection ? `the collection "${collection}". ` : 'the collection it belongs to (list_collections shows them; a new name creates a collection). ') +
          'remember extracts the facts and replaces older ones they contradict.\n' +
          '3. If a memory you found earlier is now wrong, correct it with update_memory or remove it with delete_memory.\n' +
          '4. End with a one-line list of what you saved.',
      ),
  );
}
