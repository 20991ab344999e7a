// The hooks' capture is the plugin's (plugins/claude-code/scripts/capture.mjs), for bench/capture.ts.
export { capture } from '../../plugins/claude-code/scripts/capture.mjs';
