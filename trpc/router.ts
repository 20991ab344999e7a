import { initTRPC, TRPCError, type TRPCBuiltRouter, type TRPCMutationProcedure, type TRPCQueryProcedure } from '@trpc/server';
import type { z } from 'zod';
import { catalogue } from '../procedures/index.ts';
import type { App } from '../src/core/context.ts';
import { Download } from '../src/core/download.ts';
import { AppError } from '../src/core/errors.ts';
import { invoke, type Caller } from '../src/pipeline/invoke.ts';
import { isRead, type AnyProcedure, type Procedure } from '../src/pipeline/procedure.ts';

export interface TrpcContext {
  app: App;
  caller: Caller;
  /** Adds headers (rate limits) to the HTTP response. */
  setHeaders?: (headers: Record<string, string>) => void;
}

const t = initTRPC.context<TrpcContext>().create({
  // Outside production tRPC would add the server's stack trace (file paths) to every error.
  isDev: false,
  errorFormatter: ({ shape, error }) => ({
    ...shape,
    // Same {detail, errors} as REST, so clients read one error shape everywhere.
    data: { ...shape.data, detail: error.message, errors: error.cause instanceof AppError ? error.cause.errors : undefined },
  }),
});

// Input with no required field may be left out (`collections.list.query()`); invoke reads it as `{}`.
type InputOf<I extends z.ZodType> = {} extends z.input<I> ? z.input<I> | void : z.input<I>;
type Def<I extends z.ZodType, O extends z.ZodType> = { input: InputOf<I>; output: z.output<O>; meta: object };
type TrpcProcedureOf<P> =
  P extends Procedure<infer I, infer O, infer A, infer M>
    ? A extends 'read'
      ? TRPCQueryProcedure<Def<I, O>>
      : A extends 'public' | 'admin'
        ? M extends 'GET'
          ? TRPCQueryProcedure<Def<I, O>>
          : TRPCMutationProcedure<Def<I, O>>
        : TRPCMutationProcedure<Def<I, O>>
    : never;
type RouterOf<G> = { [K in keyof G]: G[K] extends AnyProcedure ? TrpcProcedureOf<G[K]> : RouterOf<G[K]> };

/**
 * Reads are queries, everything else mutations. Input is handed to `invoke` raw, so tRPC
 * goes through the same parse, access and error mapping as REST and MCP.
 */
function toTrpc(proc: AnyProcedure) {
  const builder = t.procedure.input((raw: unknown) => raw);
  const resolve = async ({ ctx, input }: { ctx: TrpcContext; input: unknown }) => {
    let result;
    try {
      result = await invoke(ctx.app, proc, ctx.caller, input);
    } catch (err) {
      const e = err as AppError;
      ctx.setHeaders?.(e.headers ?? {});
      throw new TRPCError({ code: e.code, message: e.detail, cause: e });
    }
    ctx.setHeaders?.(result.headers);
    // A file is streamed over REST only; here it would have to sit in memory whole.
    if (result.output instanceof Download) {
      throw new TRPCError({ code: 'BAD_REQUEST', message: `${proc.name} is a file download: use ${proc.rest.method} ${proc.rest.path}` });
    }
    return result.output;
  };
  return isRead(proc) ? builder.query(resolve) : builder.mutation(resolve);
}

const record = Object.fromEntries(
  Object.entries(catalogue).map(([group, procs]) => [
    group,
    t.router(Object.fromEntries(Object.entries(procs).map(([verb, p]) => [verb, toTrpc(p as AnyProcedure)]))),
  ]),
);

// The router is assembled at run time from the catalogue; this type restates what it holds.
export const appRouter = t.router(record) as unknown as TRPCBuiltRouter<
  { ctx: TrpcContext; meta: object; errorShape: (typeof t)['_config']['$types']['errorShape']; transformer: false },
  RouterOf<typeof catalogue>
>;

/** The type a TypeScript client passes to `createTRPCClient<AppRouter>`. */
export type AppRouter = typeof appRouter;
