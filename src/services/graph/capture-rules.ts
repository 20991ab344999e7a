/**
 * What a remembered conversation holds that is not knowledge (docs/graph.md, "What remember
 * keeps"): the patterns only, each list once. `fact-heuristics.ts` applies them to the offline
 * extraction and to an LLM's facts alike.
 */

/** A speaker's name at the start of a line or sentence ("User: ...", "**Assistant:** ..."), and whose words follow. */
export const SPEAKERS: Record<string, 'user' | 'assistant' | 'other'> = {
  user: 'user',
  human: 'user',
  me: 'user',
  assistant: 'assistant',
  ai: 'assistant',
  claude: 'assistant',
  codex: 'assistant',
  chatgpt: 'assistant',
  gpt: 'assistant',
  model: 'assistant',
  bot: 'assistant',
  agent: 'assistant',
  copilot: 'assistant',
  gemini: 'assistant',
  system: 'other',
  tool: 'other',
};
const NAMES = Object.keys(SPEAKERS).join('|');
export const SPEAKER_PREFIX = new RegExp(`(?:^|\\n|(?<=[.!?])[ \\t]+)[ \\t]*(?:\\*\\*)?(${NAMES})(?:\\*\\*)?[ \\t]*:(?:\\*\\*)?[ \\t]*`, 'gi');

/** A fact that still starts with its speaker's name: the words as said, not a fact. */
export const SPEAKER_AT_START = new RegExp(`^\\W*(?:${NAMES})\\W*:`, 'i');

/** Blocks whose text is never stored: a `<private>` one (an unclosed one hides the rest), and a model's thinking. */
export const PRIVATE_BLOCK = /<private\b[^>]*>[\s\S]*?(?:<\/private\s*>|$)/gi;
export const THINKING_BLOCK = /<(thinking|think|reasoning)\b[^>]*>[\s\S]*?(?:<\/\1\s*>|$)/gi;

/** Lines that are output, code or listings, never prose: tool output pasted or quoted in a turn. */
export const NOT_PROSE_LINES: RegExp[] = [
  // stack traces: JavaScript, Python, Java/Go panics
  /^\s*at\s+\S.*(?:\(.*:\d+(?::\d+)?\)|:\d+:\d+)\s*$/,
  /^\s*at\s+(?:async\s+)?[\w.$<>[\]]+\s*$/,
  /^\s*Traceback \(most recent call last\)/,
  /^\s*File ".*", line \d+/,
  /^\s*(?:[\w.]+\.)?\w*(?:Error|Exception|Warning)(?:\s*\[\w+\])?:\s/,
  /^\s*[\w.]*\.[A-Z]\w+:\s/,
  /^\s*(?:Caused by:|panic:|goroutine \d+|Exception in thread)/,
  /^\s*\.\.\. \d+ more\s*$/,
  // log lines: a timestamp or a level first
  /^\s*\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/,
  /^\s*\[?\d{2}:\d{2}:\d{2}\b/,
  /^\s*\[?(?:INFO|WARN|WARNING|ERROR|ERR|DEBUG|TRACE|FATAL|CRITICAL)\]?(?:\s*[:|-]|\s+\[)/,
  /^\s*npm (?:ERR!|WARN|notice)/,
  // test runners' and tools' output
  /^\s*(?:[✓✔✗✘×√❯›→]|PASS\s|FAIL\s|ok\s+\d|not ok\s+\d|Tests?:\s|Test Files\s|Duration\s|Ran \d+ tests?)/,
  // shell commands, prompts and their output
  /^\s*[$>%]\s+\S/,
  /^\s*(?:npm|npx|pnpm|yarn|node|git|cd|ls|cat|grep|rg|make|docker|kubectl|helm|curl|wget|python3?|pip|go|cargo|sed|awk|echo|export|sudo|apt(?:-get)?|brew|psql|terraform|tsc|vitest|jest|pytest|ssh|scp|mv|cp|rm|mkdir|chmod|tail|head|find|sh|bash)(?:\s+[^\s.!?]*)*\s*$/,
  /^\s*(?:[d-][rwx-]{9}[@+.]?\s|total \d+\s*$)/,
  // file listings and trees
  /^\s*(?:[│├└]|──)/,
  /^\s*[\w@.~-]*\/[\w@./~-]*\/?\s*$/,
  /^\s*[\w@-]+\.[A-Za-z]{1,5}(?::\d+(?::\d+)?)?\s*$/,
  // diffs and patches
  /^(?:diff --git|index [0-9a-f]{6,}|--- |\+\+\+ |@@ )/,
  /^[+-](?![-+\s])\S/,
  // code and data: a line that opens or closes a block, ends a statement, or starts with a keyword
  /^\s*[{}[\]()]/,
  /[{;,([]\s*$/,
  /^\s*(?:const|let|var|function|import|export|return|def|class|if\s*\(|for\s*\(|while\s*\(|async|await|public|private|static|package|fn|impl|SELECT|INSERT|UPDATE|DELETE FROM|CREATE TABLE)\b/,
  /^\s*["'][\w-]+["']\s*:/,
  /^\s*\|/,
  // markdown headings: titles, not statements
  /^\s*#{1,6}\s/,
  // indented code (a nested list item starts with its bullet and is kept)
  /^(?: {4,}|\t)(?![-*•]\s|\d+[.)]\s)/,
];

/** Acknowledgements, greetings and sign-offs: the whole sentence, or its start when it is short. */
export const ACKNOWLEDGEMENT =
  /^(?:thanks?(?: you)?|thx|ty|ok(?:ay)?|k|sure|great|perfect|sounds good|sounds great|got it|done|nice|cool|yes|yeah|yep|yup|no|nope|lgtm|awesome|will do|of course|certainly|absolutely|no problem|no worries|you're welcome|makes sense|good catch|excellent|exactly|correct|right|fine|alright|all set|all good|good|good to know|hi|hello|hey|good (?:morning|afternoon|evening)|bye|cheers|fixed|understood|agreed|indeed|wonderful|amazing|brilliant|noted|ack|hmm+|oh|ah|wow|oops|sorry)\b[\s\w,'!.]{0,24}$/i;

/**
 * A speaker narrating their own next step or current action, or talking to the other side:
 * "Let me look", "I'll follow those rules", "Running the tests now", "Here's the fix",
 * "Hope this helps". The plan of the moment, not knowledge.
 */
export const CHATTER_START =
  /^(?:let me|let's (?:see|check|look|try|start|run|dig|take|go through|figure|verify|make sure|fix|debug|add|update|write|do)|i'll|i will|i'm going to|i am going to|i'd like to|i need to|i should|i want to (?:check|look|see|try|run|make sure|verify|confirm)|i can|i'm (?:now |)(?:checking|looking|reading|running|searching|going|trying|starting|updating|adding|fixing|writing|investigating|opening)|i am (?:checking|looking|reading|running|searching|trying)|i've (?:updated|added|made|changed|created|fixed|run|read|looked|checked|finished|completed|removed|renamed|refactored|written|implemented|applied|modified|moved|pushed|committed|tried|gone|found the file|opened)|i have (?:updated|added|made|changed|created|fixed|run|read|looked|checked|finished|completed|removed|written|implemented)|i (?:see|understand|agree|think so|got it)\b|now (?:let|i|i'll|we|the|run|let's)|next,? (?:i|let|we)|first,? (?:i|let)|then,? (?:i|let)|ok(?:ay)?,? (?:so |now |let|i)|alright,? |here(?:'s| is| are)|below is|the following|as (?:requested|you asked)|hope this helps|let me know|feel free|happy to|glad (?:to|it)|sure thing|no problem|good question|great question|you're right|you are right|that's right|that worked|that works|it works|works now|looks good|done[.!,:]|all done|fixed[.!,:]|please|can you|could you|would you|will you|pls\b|go ahead|try again|wait\b|hold on|one (?:sec|moment)|quick question|btw,? (?:can|could))/i;

/**
 * An action under way ("Running the tests now", "Checking the SAML config"), unless a verb
 * follows that makes the -ing word a subject ("Streaming the resize keeps memory flat").
 */
export const NARRATION_GERUND =
  /^(?:now )?(?:running|checking|looking|reading|searching|opening|inspecting|examining|investigating|updating|adding|editing|writing|creating|fixing|applying|trying|verifying|re-running|rerunning|installing|building|compiling|fetching|loading|exploring|scanning|grepping|starting|continuing|proceeding|moving on|bumping|switching|committing|pushing|deploying|formatting|refactoring|cleaning|removing|renaming|testing)\b/i;
/** The verbs that make a leading -ing word a subject rather than an action under way. */
export const FINITE_VERB =
  /\b(?:is|are|was|were|keeps|brings|makes|cuts|takes|shows|fixes|causes|needs|means|gives|helps|costs|reduces|saves|avoids|breaks|requires|adds|removes|prevents|would|will|should|must|can)\b/i;

/** The assistant reporting what it just did, in the past tense without a subject: "Added lodash-es", "Updated values.yaml". */
export const DONE_NARRATION =
  /^(?:added|updated|changed|created|fixed|removed|renamed|moved|formatted|bumped|committed|pushed|deleted|installed|wrote|replaced|refactored|implemented|edited|modified|reverted|ran|switched|merged|rebased|cleaned|applied|drafted|deployed|restarted|killed|opened|closed|reformatted|regenerated|rewrote|tested|verified|confirmed)\b/i;

/** A question without its question mark: "why does the e2e test fail on CI". */
export const QUESTION_START =
  /^(?:why|how|what|when|where|who|whom|which|whose)\b|^(?:is|are|was|were|does|did|do|can|could|would|will|should|shall|has|have) (?:there|it|this|that|we|you|i|the|a|an|our|my|any)\b/i;

/** A lead-in ending in ":" whose items are standing rules: "Rules for this repo:", "how I like to work:", "We decided:". */
export const RULE_LEAD = /\b(?:like|likes|prefer|prefers|rules?|conventions?|guidelines?|policy|how (?:i|we) work|decided|agreed|decision)\b/i;

/** An acknowledgement before the statement it answers: "Good, then the index...", "Right, we deploy with Argo CD". */
export const ACK_LEAD = /^(?:good|great|ok(?:ay)?|right|yes|yeah|yep|sure|perfect|nice|cool|correct|exactly|indeed|true),\s+(?:then,?\s+|so,?\s+)?(?=\S)/i;

/**
 * A problem as it shows now ("The image worker keeps restarting", "The dashboard takes 8s to
 * load"): the report that starts a task. Its cause, once found, is the knowledge, so a sentence
 * saying "because" is kept.
 */
export const SYMPTOM =
  /\b(?:keeps (?:restarting|crashing|failing|timing out)|fails? (?:randomly|sometimes|intermittently|on ci)|crash(?:es|ed)? (?:on|when|in)|is (?:broken|slow|stuck|down|hanging)|doesn't work|won't start|takes \d+\s*(?:s|ms|seconds?|minutes?)\b)/i;

/** The assistant describing the state its own change left ("The module now has type hints", "Both apps are now at 3.14"). */
export const CHANGE_REPORT = /\bnow\b/i;

/** Status reports of the moment: the build or the tests passing now. */
export const STATUS_REPORT =
  /^(?:all |the )?(?:\d+ )?(?:tests?|specs?|checks?|builds?|lint(?:ing)?|ci|type ?checks?|the suite)(?: \w+)?(?: (?:now|still|all))? (?:pass(?:es|ed)?|are passing|is passing|succeed(?:s|ed)?|is green|are green|is clean|are clean|fail(?:s|ed)?|is failing|are failing|ran|run|compile[sd]?)\b/i;

/** A reply's opening that announces rather than says: "This means", "That should", "It looks like". */
export const DEICTIC_START =
  /^(?:this|that|these|those|it)(?:'s| is| was| means| should| will| would| looks| seems| might| could| may| did| does| works| worked)\b/i;

/** Words that start a request (an imperative sentence): the task of the moment, unless a rule word makes it a standing rule. */
export const REQUEST_VERBS =
  /^(?:fix|add|run|check|look|update|make|create|write|remove|delete|change|refactor|implement|try|show|help|explain|find|open|rename|move|go|start|stop|read|review|test|debug|investigate|continue|commit|push|deploy|install|build|revert|undo|redo|tell|give|list|print|search|grep|clean|format|lint|merge|rebase|bump|upgrade|set up|setup|port|convert|split|rewrite|restore|retry|rerun|re-run|figure|dig|see|do|let|keep going|proceed|summarize|summarise|describe|compare|use|switch|replace|drop|skip|ignore|note|remember|don't forget|draft|prepare|connect|kill|set|get|put|send|email|ping|ship|wire|hook up|bring|pull|paste|copy|grab)\b(?!\s+(?!(?:this|its|his|us|as|is|was|has|yes)\b)[a-z]+(?<!ss)s(?=[\s.,!;:]|$))/i;

/** What makes an imperative a standing rule rather than a request: "Always use pnpm", "Never push to main". */
export const RULE_WORDS = /\b(?:always|never|don't ever|do not ever|from now on|in (?:this|our) (?:repo|project|codebase)|must|mustn't|must not|by default)\b/i;

/** A leading "Don't ..." or "Do not ..." is a prohibition, itself a rule. */
export const PROHIBITION = /^(?:don't|do not|never|always|avoid)\b/i;

/** A conclusion's lead-in, dropped so that the conclusion stands alone: "It turns out (that) the flaky test was the timezone". */
export const CONCLUSION_LEAD =
  /^(?:so,?\s+|ok(?:ay)?,?\s+|ah,?\s+|aha,?\s+|found it[:.!]?\s+|got it[:.!]?\s+|i (?:found|confirmed|verified|noticed|learned|realized|realised|discovered|checked and|can confirm) (?:that |out that )?|it turns out (?:that )?|turns out (?:that )?|(?:as|it) (?:it )?(?:appears|seems),?\s+(?:that )?|in short,?\s+|to summari[sz]e,?\s+|the answer is(?: that)?:?\s+|summary:\s+|conclusion:\s+|tl;?dr:?\s+|note:\s+|noted[:,]\s+|fyi,?:?\s+|btw,?\s+)+/i;

/** Code inside a sentence: a statement, a call, an operator no prose uses. */
export const CODE_MARKS = /[{}]|\)\.\w+\(|;\s*$|=>|==|!=|&&|\|\||::|^\s*[<[]|\w=\S/;

/** The first person, left in a fact whose holder was not named: it cannot stand on its own. */
export const FIRST_PERSON = /\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself)\b/i;

/** First-person words a user's statement uses, and what they become once its holder is named. */
export const HOLDERS: Array<[RegExp, string, 'subject' | 'other']> = [
  [/\bI'm\b/g, 'the user is', 'other'],
  [/\bI am\b/g, 'the user is', 'other'],
  [/\bI've\b/g, 'the user has', 'other'],
  [/\bI'd\b/g, 'the user would', 'other'],
  [/\bI\b/g, 'the user', 'subject'],
  [/\bmy\b/gi, "the user's", 'other'],
  [/\bmine\b/gi, "the user's", 'other'],
  [/\bmyself\b/gi, 'the user', 'other'],
  [/\bme\b/gi, 'the user', 'other'],
  [/\bwe're\b/gi, 'the team is', 'other'],
  [/\bwe are\b/gi, 'the team is', 'other'],
  [/\bwe've\b/gi, 'the team has', 'other'],
  [/\bwe'd\b/gi, 'the team would', 'other'],
  [/\bwe\b/gi, 'the team', 'subject'],
  [/\bour\b/gi, "the team's", 'other'],
  [/\bours\b/gi, "the team's", 'other'],
  [/\bus\b/g, 'the team', 'other'],
];

/** Adverbs that may stand between a subject and its verb ("we always squash-merge"). */
export const ADVERBS = [
  'always',
  'never',
  'usually',
  'often',
  'really',
  'strongly',
  'generally',
  'normally',
  'also',
  'only',
  'still',
  'just',
  'mostly',
  'rarely',
  'sometimes',
  'typically',
  'definitely',
  'actually',
  'all',
  'both',
  'absolutely',
  'much',
  'now',
  'currently',
  'already',
  'mainly',
];

/** Verbs that do not take an -s after "the user" / "the team": modals, and forms that are already past (regular ones, in -ed, are told by their ending) or third person. */
export const UNINFLECTED =
  /^(?:will|would|can|could|should|shall|may|might|must|won't|wouldn't|can't|couldn't|shouldn't|did|didn't|had|was|wasn't|has|is|needs?n't|met|went|said|made|took|got|saw|came|knew|thought|told|found|gave|left|felt|kept|put|ran|set|began|brought|bought|built|sent|spent|wrote|lost|paid|read|meant|chose|ate|drank|flew|drove|forgot|grew|hit|held|led|let|sat|slept|spoke|stood|taught|understood|won|wore|broke|became|fell|heard|sold|quit|shut|cut)$/i;

/** Irregular present forms after "the user" / "the team". */
export const IRREGULAR: Record<string, string> = {
  am: 'is',
  are: 'is',
  were: 'was',
  have: 'has',
  do: 'does',
  "don't": "doesn't",
  go: 'goes',
  "aren't": "isn't",
  "haven't": "hasn't",
  "weren't": "wasn't",
};

/** "Let's use X" from the user: a decision the team made, not a step of the moment. */
export const LETS_DECIDE = /^let's (use|go with|switch to|keep|stick with|adopt|standardi[sz]e on|move to|drop|stop using|avoid|pick|choose)\b/i;
