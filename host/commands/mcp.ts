import { HELP, onShutdown, type Command } from './command.ts';

export const mcp: Command = {
  usage: `Usage: orgmem mcp

MCP over stdio, for Claude Desktop, Claude Code, Cursor and other MCP clients. stdout carries the
protocol; logs go to stderr.

Environment (in the "env" of this server in the MCP client's config: clients start orgmem mcp
with a clean environment, not your shell's):
  ORGMEM_API_KEY    the API key whose memories the client uses (required)
  ORGMEM_URL        a running orgmem server to forward to; unset, this process opens the data
                    itself (DATABASE_URL, else the embedded data directory, ORGMEM_DATA_DIR),
                    or goes through the orgmem serve that holds that directory

Options:
${HELP}`,
  async run() {
    const { runMcpCommand } = await import('../mcp-command.ts');
    return runMcpCommand(onShutdown);
  },
};
