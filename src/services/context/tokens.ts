import { countTokens as count } from 'gpt-tokenizer/encoding/o200k_base';

/**
 * The tokenizer budgets are counted with: o200k_base, the encoding of OpenAI's current models
 * (docs/context.md says why and how other models' counts differ). It ships inside the package,
 * so nothing is downloaded at run time.
 */
export const ENCODING = 'o200k_base';

// Stored text may contain a special token's spelling (`<|endoftext|>`): it is counted as the
// plain text it is, never refused.
const PLAIN = { disallowedSpecial: new Set<string>() };

export const countTokens = (text: string): number => count(text, PLAIN);
