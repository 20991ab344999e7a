export { createOrgmem, type OrgmemClient, type OrgmemOptions } from './client.js';
export { orThrow, OrgmemError, type Answer, type ErrorBody } from './error.js';
export { mcpServer } from './mcp.js';
export { memvaultHeaders, proxyBaseUrls, type MemvaultHeaders } from './proxy.js';
export type { components, operations, paths } from './schema.js';
