/** How orgmem names itself to MCP clients, whether it serves or only explains why it cannot. */
export const SERVER_INFO = { name: 'orgmem', version: '0.1.0' };
