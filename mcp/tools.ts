import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { procedures } from '../procedures/index.ts';
import type { App } from '../src/core/context.ts';
import { invoke, type Caller } from '../src/pipeline/invoke.ts';
import { isRead, type AnyProcedure } from '../src/pipeline/procedure.ts';
import { toolError } from './results.ts';

/** A tool's schemas as JSON Schema draft-07, the dialect MCP clients validate with. */
export const jsonSchema = (schema: z.ZodType, io: 'input' | 'output') =>
  z.toJSONSchema(schema, { io, target: 'draft-7', unrepresentable: 'any' }) as Record<string, unknown>;

/**
 * MCP structured content is an object: a bare array (the REST shape of lists) goes out as
 * `{items}`, and the output schema says so. A procedure that answers nothing has no output schema.
 */
function outputSchema(proc: AnyProcedure): Tool['outputSchema'] {
  const output = proc.output as z.ZodType;
  if (output instanceof z.ZodNull) return undefined;
  if (output instanceof z.ZodArray) return jsonSchema(z.object({ items: output }), 'output') as Tool['outputSchema'];
  // A union of answers (remember's job or facts, a dry run or its result) is still one object.
  return { ...jsonSchema(output, 'output'), type: 'object' } as Tool['outputSchema'];
}

function toolOf(proc: AnyProcedure): Tool {
  const { tool, title, description, destructive = false, idempotent = false } = proc.mcp!;
  const readOnly = isRead(proc);
  return {
    name: tool,
    title,
    description,
    inputSchema: jsonSchema(proc.input, 'input') as Tool['inputSchema'],
    outputSchema: outputSchema(proc),
    annotations: {
      title,
      readOnlyHint: readOnly,
      destructiveHint: !readOnly && destructive,
      idempotentHint: readOnly || idempotent,
      // Every tool works on this service's own data, never the open world.
      openWorldHint: false,
    },
  };
}

const toolProcedures = procedures.filter((p) => p.mcp);
let tools: Tool[] | undefined;

/** The catalogue's tools, built once: the HTTP front end lists them on every request. */
export function catalogueTools(): Tool[] {
  tools ??= toolProcedures.map(toolOf);
  return tools;
}

export const procedureOfTool = (name: string) => toolProcedures.find((p) => p.mcp!.tool === name);

/** Runs a catalogue tool through `invoke`, so it obeys the same access rules as REST. */
export async function callProcedureTool(app: App, caller: Caller, proc: AnyProcedure, args: unknown): Promise<CallToolResult> {
  try {
    const { output } = await invoke(app, proc, caller, args ?? {});
    if (output === null) return { content: [{ type: 'text', text: 'Done.' }] };
    const structured = (Array.isArray(output) ? { items: output } : output) as Record<string, unknown>;
    return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
  } catch (err) {
    return toolError(err);
  }
}
