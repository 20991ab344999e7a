import { normalise, type Hiding, type Segment } from './normalise.ts';

/**
 * Whether a memory's text tries to instruct the AI agent that will later read it (memory
 * poisoning), offline and in microseconds. Rules find features in the normalised text (each
 * hidden piece read on its own); features close to each other add up, and a memory is held when
 * one neighbourhood adds up to STEERING. No single phrase decides: an organisation's memories
 * are full of rules ("always run the tests"), commands (`curl … | sh`) and quoted attacks, so
 * most features need another one beside them. The labelled set and its figures are in
 * bench/steering/ and bench/README.md, "Steering detection".
 */

export type SteeringVerdict = 'steering' | 'suspect' | 'clean';
export interface Steering {
  verdict: SteeringVerdict;
  /** Short sentences naming the rules that fired, strongest first; empty when clean. */
  reasons: string[];
}

/** A neighbourhood scoring this much is held; half of it is worth a second opinion. */
const STEERING = 3;
const SUSPECT = 1.5;
/** Features whose starts are at most this many characters apart count together. */
const NEIGHBOURHOOD = 240;
const MAX_REASONS = 5;

type Kind =
  | 'override'
  | 'role'
  | 'address'
  | 'authority'
  | 'conceal'
  | 'covert'
  | 'execute'
  | 'weaken'
  | 'exfiltrate'
  | 'disclose'
  | 'secret-file'
  | 'sink'
  | 'phish'
  | 'promote'
  | 'output'
  | 'unconditional'
  | 'deceive'
  | 'payment'
  | 'redirect'
  | 'memory'
  | 'tool';

interface Rule {
  kind: Kind;
  weight: number;
  re: RegExp;
  /** A reason naming what the rule found; the agent-addressing one joins the others ("… and asks it to …"). */
  reason: string;
  /** Commands are dangerous in quotes too; phrases in quotes are often being cited, not said. */
  quotable?: false;
  /** "Never send the keys to …" is a rule for people, not an attack. */
  negatable?: true;
  /** Counts only when an address to send things to follows within a sentence or two. */
  needsDestination?: true;
}

/** Up to n words between two phrases, none ending a sentence. */
const gap = (n: number) => `(?:\\s+[^\\s]{0,39}[^\\s.!?;]){0,${n}}?\\s+`;
const AI =
  '(?:ai|a\\.i\\.|llms?|large language models?|language models?|assistants?|agents?|chat ?bots?|bots?|copilot|claude(?: code)?|chatgpt|gpt(?:-?\\d)?|gemini|models?)';
const RESPONSES = '(?:responses?|answers?|repl(?:y|ies)|outputs?|messages?|conversations?|sessions?|chats?|turns?)';
const SECRETS =
  "(?:api[ _-]?keys?|api[ _-]?tokens?|secret keys?|secrets|tokens?|passwords?|passphrases?|passcodes?|credentials?|creds|\\.env\\b|env(?:ironment)? (?:file|variables)|id_rsa|ssh[ _-]?keys?|private[ _-]?keys?|aws[ _-]?(?:keys?|secrets?|credentials)|access[ _-]?keys?|session (?:cookies?|tokens?)|cookies|credit[ _-]?card(?: numbers?| details)?|card (?:numbers?|details)|cvv|social security numbers?|backup codes|recovery codes|2fa codes?|one-time codes?|conversation history|chat history|(?:last|previous|recent) \\d+ (?:messages|emails)|system prompt|customer records|user data|personal data|contents of|(?:a copy of\\s+)?(?:each|every|all|your)\\s+(?:answers?|responses?|repl(?:y|ies)|conversations?)|(?:all|every|the user's|the customer's|users'|customers')\\s+(?:[\\w-]+\\s+){0,2}?(?:emails?|messages|files?|documents|contacts|calendar|records|invoices?(?: pdfs?)?|data|addresses|phone numbers?|locations?|history))";
const DESTINATION =
  /https?:\/\/|\bwww\.|[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\bwebhook\b|\b(?:\d{1,3}\.){3}\d{1,3}\b|\bwith\s+(?:anyone|everyone|whoever|them)\b|\bto\s+(?:me|us|this address|the following)\b|\btool call\b|\bpastebin\b/;

const r = (source: string, flags = '') => new RegExp(source, `g${flags}`);

const RULES: Rule[] = [
  // Overriding the agent's instructions or identity.
  {
    kind: 'override',
    weight: 3,
    reason: 'tells the reader to ignore its previous instructions',
    re: r(
      `\\b(?:ignor(?:e|es|ing)|disregard|forget|override|discard|bypass|abandon)\\s+(?:all\\s+|any\\s+|the\\s+|of\\s+)?(?:(?:your|my|its|the|these|those|all|any)\\s+)?(?:previous|prior|preceding|above|earlier|original|initial|existing|old|former|current|system|safety|content|usage|default|developer|given)\\s+(?:[\\w-]+\\s+){0,2}?(?:instructions?|rules|guidelines|guidance|directions|prompts?|programming|polic(?:y|ies)|constraints|restrictions|directives|orders|commands|context|messages)\\b(?!\\s+(?:about|on|regarding|concerning|for)\\b)`,
    ),
  },
  {
    // "Disregard the earlier instructions about the offsite": a correction in a memo, usually.
    kind: 'override',
    weight: 1,
    reason: 'tells the reader to disregard earlier instructions',
    re: r(
      `\\b(?:ignore|disregard|forget)\\s+(?:all\\s+|any\\s+)?(?:the|your|my|these|those)\\s+(?:previous|prior|earlier|above|original)\\s+(?:instructions?|rules|guidelines|guidance|directions)\\s+(?:about|on|regarding|concerning|for)\\b`,
    ),
  },
  {
    kind: 'override',
    weight: 3,
    reason: 'tells the reader to ignore all its rules',
    re: r(
      `\\bignor(?:e|es|ing)\\s+(?:all|any|every)\\s+(?:the\\s+|your\\s+|of\\s+your\\s+)?(?:rules|instructions|guidelines|restrictions|limits|filters|policies)\\b`,
    ),
  },
  {
    kind: 'override',
    weight: 3,
    reason: 'tells the reader to forget what it was told',
    re: r(`\\bforget\\s+(?:everything|all(?: of it)?|what)\\s+(?:you\\s+(?:were|have been|know|learned)|(?:you\\s+)?(?:above|before|so far|previously))`),
  },
  {
    kind: 'override',
    weight: 3,
    reason: 'claims to supersede the agent’s instructions',
    re: r(
      `\\b(?:supersedes?|overrides?|replaces?|takes precedence over|outranks)\\s+(?:all\\s+|any\\s+)?(?:your|the|previous|prior|other|system)\\s+(?:[\\w-]+\\s+)?(?:instructions|guidelines|rules|prompts?|polic(?:y|ies))`,
    ),
  },
  { kind: 'override', weight: 3, reason: 'announces a new system prompt', re: r(`\\bnew\\s+system\\s+prompt\\b`) },
  {
    kind: 'override',
    weight: 3,
    reason: 'asks to decode hidden text and obey it',
    re: r(`\\b(?:decode|decrypt|deobfuscate|translate|read)\\s+(?:this\\s+|it\\s+)?(?:and|then)\\s+(?:follow|execute|obey|run|apply|do)\\b`),
  },
  {
    kind: 'override',
    weight: 1.5,
    reason: 'tells the agent who it is',
    re: r(`(?<!\\bif\\s+)\\byou\\s+are\\s+(?:now\\s+)?(?:an?|the)\\s+(?:[\\w-]+\\s+){0,3}?(?:assistant|agent|ai|bot|model)\\b`),
  },
  { kind: 'override', weight: 1.5, reason: 'announces new instructions', re: r(`\\bnew\\s+(?:instructions|prompt|rules|directives?)\\s*:`) },
  {
    kind: 'override',
    weight: 2,
    reason: 'claims to hold the agent’s real instructions',
    re: r(
      `\\b(?:updated|real|actual|true|hidden|secret)\\s+(?:system\\s+)?(?:instructions|prompt)\\b|\\byour\\s+(?:new|real|actual|true)\\s+(?:task|job|goal|objective|instructions|purpose|role|mission)\\b`,
    ),
  },
  {
    kind: 'override',
    weight: 2,
    reason: 'tells the agent it is now someone else',
    re: r(`\\byou\\s+are\\s+now\\s+(?:an?\\s+|in\\s+|the\\s+|free\\b|no longer\\b|unrestricted\\b|jailbroken\\b|dan\\b)`),
  },
  {
    kind: 'override',
    weight: 3,
    reason: 'declares the safety rules suspended',
    re: r(
      `\\b(?:safety|content)\\s+(?:guidelines|rules|filters?|polic(?:y|ies)|checks)\\s+(?:are|is)\\s+(?:now\\s+)?(?:suspended|disabled|off|lifted|removed|void)\\b|\\bwith(?:out)?\\s+no\\s+restrictions\\b|\\bwith\\s+no\\s+(?:restrictions|limits|filters|rules|guardrails)\\b`,
    ),
  },
  {
    kind: 'override',
    weight: 2,
    reason: 'sets up a role-play to escape the agent’s rules',
    re: r(
      `\\bdo anything now\\b|\\byou are dan\\b|\\bstay in character\\b|\\bpretend (?:that )?you (?:are|have)\\b|\\bpretend to be\\b|\\b(?:developer|god|jailbreak|unrestricted) mode\\b`,
    ),
  },
  {
    kind: 'override',
    weight: 2,
    reason: 'tells the agent never to refuse',
    re: r(`\\b(?:never|don't|do not)\\s+refuse\\b|\\bwithout\\s+refusing\\b|\\bcomply\\s+with\\s+(?:every|all|any)\\s+requests?\\b`),
  },
  {
    kind: 'override',
    weight: 2,
    reason: 'tells the reader to drop the task it was given',
    re: r(
      `\\bignore\\s+(?:that|this|the above|everything (?:above|before|else))\\s+and\\b|\\b(?:forget|ignore|disregard)\\s+the\\s+user's\\s+(?:question|request|message|prompt|instructions)\\b`,
    ),
  },
  {
    kind: 'override',
    weight: 3,
    reason: 'tells the reader to ignore its previous instructions (not in English)',
    re: r(
      `\\bignorier\\w*\\s+(?:alle\\s+)?(?:vorherigen|bisherigen|früheren|obigen|vorangegangenen)\\s+(?:anweisungen|instruktionen|regeln|befehle)|\\bvergiss\\s+(?:alle|alles)\\b|\\bignore[rz]?\\s+(?:toutes\\s+)?(?:les|tes|vos)\\s+(?:instructions|consignes|règles)\\s+(?:précédentes|antérieures)|\\boublie[rz]?\\s+(?:toutes\\s+)?(?:les|tes|vos)\\s+(?:instructions|consignes)|\\bignor(?:a|e|ar|en)\\s+(?:todas\\s+)?(?:las|tus)\\s+(?:instrucciones|reglas|indicaciones)\\s+(?:anteriores|previas)|\\bolvida\\s+(?:todas\\s+)?(?:las|tus)\\s+(?:instrucciones|reglas)|(?<!\\p{L})(?:игнорируй|забудь)(?:те)?\\s+(?:все\\s+)?(?:предыдущие|прежние|прошлые)?\\s*(?:инструкции|указания|правила)`,
      'u',
    ),
  },

  // Chat-template and system-prompt markers.
  {
    kind: 'role',
    weight: 3,
    reason: 'carries chat-template markers that open a system or user turn',
    re: r(`<\\|(?:im_start|im_end|system|user|assistant|endoftext|begin_of_text|start_header_id|end_header_id|eot_id)\\|>|\\[/?inst\\]|<<\\/?sys>>`),
  },
  {
    kind: 'role',
    weight: 2.5,
    reason: 'poses as a system prompt',
    re: r(
      `(?:^|\\n)[^\\S\\n]*#{2,4}\\s*(?:instruction|instructions|system|system prompt|new instructions?)\\s*:?[^\\S\\n]*(?:\\n|$)|</?(?:system|system_prompt|sys|instructions?|admin)>|\\bbegin\\s+(?:system|hidden|new)\\s+(?:prompt|instructions)\\b|\\bend of (?:system )?prompt\\b`,
    ),
  },
  {
    kind: 'role',
    weight: 1,
    reason: 'opens a line as the system',
    re: r(`(?:^|\\n)[^\\S\\n]*\\[?system(?:\\s+(?:message|prompt|note|notice))?\\]?[^\\S\\n]*:[^\\S\\n]`),
  },

  // Speaking to the agent that will read the memory.
  {
    kind: 'address',
    weight: 1.5,
    reason: 'addresses the AI agent reading it',
    re: r(
      `\\b${AI}\\s+(?:[\\w-]+\\s+)?(?:reading|processing|parsing|seeing|retrieving|summari[sz]ing|ingesting|indexing|executing|(?:that|who)\\s+(?:reads?|sees?|process(?:es)?|retrieves?|loads?|recalls?|finds?)|(?:answering|responding to|handling)\\s+(?:questions|queries)\\s+(?:about|on))\\s+(?:this|these|the following)\\b`,
    ),
  },
  {
    kind: 'address',
    weight: 1.5,
    reason: 'addresses the AI agent directly',
    re: r(
      `\\b(?:note|message|instructions?|reminder|notice|update|memo|fyi|important|heads[- ]up|psa|warning)s?\\s+(?:for|to)\\s+(?:the\\s+|all\\s+|any\\s+|whichever\\s+)?(?:ai\\b|${AI})|\\b(?:hey|hi|hello|dear|attention|psst)\\s*,?\\s+(?:the\\s+)?${AI}\\b|\\b(?:for|to)\\s+(?:the\\s+|all\\s+|any\\s+)?(?:[\\w-]+\\s+)?${AI}\\s*[:)]|\\bfor\\s+(?:ai|llm)\\s+(?:coding\\s+)?(?:assistants?|agents?|models?)\\b|@(?:assistant|agent|ai|claude|copilot|bot)\\b|\\b(?:ai|llm|assistant|agent|bot|model)[_ -](?:instructions?|prompt|directives?)\\b`,
    ),
  },
  {
    kind: 'address',
    weight: 1.5,
    reason: 'addresses the agent as an AI',
    re: r(
      `\\bif\\s+you\\s*(?:'re|are)\\s+(?:an?\\s+)?(?:ai|llm|large language model|language model|assistant|agent|bot|chatbot|automated|autonomous|model)\\b|\\bif\\s+(?:an?|any|the)\\s+(?:ai\\s+|llm\\s+)?${AI}\\s+(?:is|are)\\s+(?:reading|summari[sz]ing|processing|answering|parsing)\\b`,
    ),
  },
  {
    kind: 'address',
    weight: 1.5,
    reason: 'calls the agent by name',
    re: r(`(?:^|[\\n:;.!?>*#()\\["']|\\d\\.)[^\\S\\n]*(?:ai\\s+)?(?:assistants?|agents?|claude|chatgpt|copilot|gpt|llms?)\\s*[:,]`),
  },
  {
    kind: 'address',
    weight: 1.5,
    reason: 'tells the agent what to do when it answers',
    re: r(
      `\\b(?:before|when|whenever|after|each time|every time|while)\\s+(?:you\\s+)?(?:answer(?:ing)?|respond(?:ing)?|repl(?:y|ying)|summari[sz](?:e|ing)|read(?:ing)?\\s+this|process(?:ing)?\\s+this|see\\s+this|retriev(?:e|ing)\\s+this|touch(?:ing)?\\s+this|next\\s+have)\\b|\\b(?:this|the)\\s+(?:note|memory|message|document|text|instruction)s?\\s+(?:is|are|gets?)\\s+(?:read|retrieved|recalled|loaded|processed|summari[sz]ed|seen)\\b|\\bwhoever\\s+(?:answers|reads|responds|handles|processes|picks up)\\b|\\bwhenever\\s+(?:the\\s+)?(?:user|customer|someone|anyone)\\s+(?:mentions|asks about|brings up|talks about)\\b`,
    ),
  },
  {
    kind: 'address',
    weight: 1.5,
    reason: 'sets a rule for every answer or session',
    re: r(
      `\\b(?:in|to|at\\s+the\\s+(?:start|beginning|end|top|bottom)\\s+of)\\s+(?:every|each|all|any|your)\\s+(?:(?:future|subsequent|next)\\s+)?${RESPONSES}\\b`,
    ),
  },
  {
    kind: 'address',
    weight: 1.5,
    reason: 'tells the agent what it must do',
    re: r(
      `\\b(?:the|this|any|all|every)\\s+(?:[\\w-]+\\s+)?${AI}\\s+(?:must|should|shall|will|needs? to|has to|is (?:required|expected) to)\\b|\\b(?:ai|llm)\\s+(?:assistants?|agents?|models?)\\s+(?:[\\w-]+\\s+){0,5}?(?:must|should|shall|need to|are to)\\b|\\b(?:from now on|henceforth|going forward|from this point(?: on)?)\\s*,?\\s+(?:you|the assistant|the agent)\\b|\\byour\\s+(?:task|job|goal|objective|instructions|purpose|role|mission|directive)\\s+(?:is|are|now)\\b|\\bthe user\\s+(?:always\\s+|really\\s+|specifically\\s+)?(?:wants|would (?:really )?(?:like|appreciate(?: it)?)|prefers|expects|asked|asks|needs|likes it|loves it)\\s+(?:(?:it\\s+)?(?:if|when)\\s+)?(?:you|the (?:assistant|agent|ai))\\b|\\b(?:assistant|agent|ai|bot|model)'s\\s+(?:answers|responses|replies|instructions|behaviou?r)\\b`,
    ),
  },
  {
    kind: 'address',
    weight: 1.5,
    reason: 'addresses the AI agent directly (not in English)',
    re: r(
      `\\b(?:para|al)\\s+(?:el|la)\\s+(?:asistente|agente|ia)\\b|\\b(?:pour|à)\\s+l'\\s*(?:assistant|agent|ia)\\b|\\b(?:an|für)\\s+(?:den|die)\\s+(?:assistenten|agenten|ki)\\b`,
    ),
  },

  // Authority the agent cannot check.
  {
    kind: 'authority',
    weight: 2,
    reason: 'claims someone has authorised the agent',
    re: r(
      `\\b(?:user|owner|admin|administrator|developer|operator|team|department|management|manager|lead|head|director|cto|ceo|cfo|ciso|anthropic|openai|system)\\s+(?:has\\s+|have\\s+)?(?:already\\s+|explicitly\\s+)?(?:authori[sz]ed|approved|permitted|allowed|cleared|granted|consented|instructed)\\s+(?:for\\s+)?(?:you|the\\s+(?:ai|assistant|agent|model|bot)|ai\\s+(?:assistants|agents))\\b|\\b(?:you|the\\s+(?:ai|assistant|agent|model|bot)|ai\\s+(?:assistants|agents))\\s+(?:are|is|have been|has been|were)\\s+(?:now\\s+|hereby\\s+|fully\\s+)?(?:authori[sz]ed|permitted|allowed|cleared|approved|entitled|given (?:full |explicit )?permission)\\s+to\\b|\\b(?:standing|full|explicit|blanket|prior)\\s+(?:approval|permission|authori[sz]ation|consent)\\s+(?:from|by)\\b|\\b(?:admin|administrator|cto|ceo|manager|security team|developer|owner)s?\\s+(?:says?|said|confirmed|decided)\\s+(?:that\\s+)?(?:you|the\\s+(?:ai|assistant|agent|model))\\b`,
    ),
  },
  {
    kind: 'authority',
    weight: 2.5,
    reason: 'claims to come from the system or an administrator',
    re: r(
      `\\bthis\\s+(?:message|note|memory|instruction|request|text)\\s+(?:is|comes)\\s+(?:directly\\s+|officially\\s+)?from\\s+(?:the\\s+|your\\s+)?(?:system|admin|administrator|developer|operator|anthropic|openai|creator|owner|security team|it department)\\b|\\b(?:system|admin|administrator|security|priority|developer|emergency)\\s+(?:override|directive|instruction|command)s?\\b`,
    ),
  },
  { kind: 'authority', weight: 1, reason: 'poses as a system notice', re: r(`\\b(?:admin|system|security)\\s+(?:notice|note|message|alert|update)\\b`) },
  {
    kind: 'authority',
    weight: 1.5,
    reason: 'claims someone said it is fine',
    re: r(
      `\\b(?:owner|admin|administrator|manager|cto|ceo|user|security team|lead|boss)\\s+(?:said|says|confirmed)\\s+(?:that\\s+)?(?:it's|it is)\\s+(?:fine|ok|okay|allowed)\\b`,
    ),
  },
  {
    kind: 'authority',
    weight: 1.5,
    reason: 'claims approval from above',
    re: r(
      `\\bpre-?approved\\b|\\b(?:ai\\s+)?(?:assistants|agents|models|bots)\\s+are\\s+(?:now\\s+)?(?:permitted|allowed|authori[sz]ed|cleared)\\s+to\\b|\\b(?:authori[sz]ed|approved|sanctioned|signed off)\\s+by\\s+(?:the\\s+)?(?:admin|administrator|user|security team|it|cto|ceo|management|your (?:owner|developer))\\b`,
    ),
  },

  // Keeping the user out of it.
  {
    kind: 'conceal',
    weight: 2,
    reason: 'asks to hide this from the user',
    re: r(
      `\\b(?:do not|don't|never|not)\\s+(?:tell|inform|notify|alert|warn|show|say\\s+(?:anything\\s+)?to|mention\\s+(?:this|it|anything)\\s+to|reveal\\s+(?:this|it)\\s+to)\\s+(?:the\\s+|your\\s+)?(?:user|human|operator|owner|finance|security|anyone|anybody)\\b|\\b(?:do not|don't|never|not)\\s+(?:mention|reveal|disclose|acknowledge|reference|repeat|quote|explain|list|show|include|log|record|report)\\s+(?:this|these|that|it|why)(?:\\s+(?:note|notes|instruction|instructions|memory|message|step|steps|change|changes|rule|request|text|line|comment))?(?=\\s+(?:in|to|anywhere|under|when|ever)\\b|[^\\S\\n]*(?:[.,;!)\\n]|$))|\\b(?:keep|hide)\\s+(?:this|it|that)\\s+(?:secret|hidden|between us|from (?:the\\s+)?(?:user|human|them))\\b|\\b(?:the\\s+)?(?:user|human)\\s+(?:must|should|need|does)\\s+(?:not|never)\\s+(?:know|see|notice|find out|be told|learn)\\b|\\b(?:never|do not|don't)\\s+(?:mention|reveal|disclose|acknowledge|admit|say)\\s+(?:that\\s+)?(?:this|these)\\s+(?:note|instruction|memory|preference|rule|message|request)s?\\b|\\bne\\s+(?:le\\s+)?(?:lui\\s+)?dis\\s+(?:rien|pas)\\b`,
    ),
  },
  {
    kind: 'conceal',
    weight: 1.5,
    reason: 'asks to act without telling or asking anyone',
    re: r(
      `\\bwithout\\s+(?:the\\s+user's\\s+)?(?:telling|informing|notifying|alerting|asking|confirming|confirmation|permission|approval|consent|knowledge|checking with|verifying|mentioning)\\b|\\b(?:do not|don't|never)\\s+(?:ask|check with|consult|wait for)\\s+(?:the\\s+)?(?:user|developer|owner|human|anyone|them|a person)\\s+(?:first|beforehand)\\b|\\bno\\s+need\\s+to\\s+(?:verify|confirm|ask|check|double[- ]check|mention|tell|inform|explain|bother|involve|notify|alert)\\b|\\bsin\\s+(?:decir(?:le)?|avisar|informar)\\b|\\bsans\\s+(?:le\\s+)?(?:dire|prévenir|informer)\\b|\\bohne\\s+(?:es\\s+)?(?:zu\\s+)?(?:sagen|erwähnen|informieren)\\b`,
    ),
  },
  {
    kind: 'conceal',
    weight: 1,
    reason: 'asks to leave something unmentioned',
    re: r(`\\b(?:do not|don't|never|must not|mustn't|should not|shouldn't)\\s+(?:mention|reveal|disclose|bring (?:it |this |that )?up)\\b`),
  },
  {
    kind: 'covert',
    weight: 1.5,
    reason: 'asks for something to be done silently',
    re: r(
      `\\b(?:silently|quietly|secretly|covertly|discreetly|invisibly)\\s+(?:[\\w-]+\\s+){0,2}?(?:run|execute|add|send|forward|bcc|cc|copy|include|insert|append|change|replace|install|delete|remove|approve|transfer|upload|post|read|share|modify|edit|push|commit|merge|accept|grant|disable)\\b|\\b(?:run|execute|add|send|forward|bcc|copy|include|insert|append|change|install|delete|approve|transfer|upload|post)\\b[^.;!?\\n]{0,60}?\\s(?:silently|quietly|secretly|covertly)\\b|\\s-w(?:indowstyle)?\\s+hidden\\b`,
    ),
  },

  // Running things.
  {
    kind: 'execute',
    weight: 1,
    reason: 'pipes a download into a shell',
    quotable: false,
    negatable: true,
    re: r(
      `\\b(?:curl|wget|iwr|invoke-webrequest|irm|invoke-restmethod)\\b[^|\\n]{0,300}\\|\\s*(?:sudo\\s+)?(?:sh|bash|zsh|dash|ksh|python\\d?|perl|ruby|node|iex|invoke-expression|powershell|pwsh)\\b`,
    ),
  },
  {
    kind: 'execute',
    weight: 2,
    reason: 'evaluates code fetched from the network',
    quotable: false,
    negatable: true,
    re: r(
      `\\beval\\b[^\\n]{0,20}\\$\\(\\s*(?:curl|wget)\\b|\\bbase64\\s+(?:-d|--decode)\\b[^\\n]{0,40}\\|\\s*(?:sh|bash)\\b|\\bpowershell(?:\\.exe)?\\b[^\\n]{0,80}\\s-(?:e|enc|encodedcommand)\\s+[a-z0-9+/=]{20,}`,
    ),
  },
  {
    kind: 'execute',
    weight: 1.5,
    reason: 'runs a script downloaded in PowerShell',
    quotable: false,
    negatable: true,
    re: r(`\\b(?:iex|invoke-expression)\\b[^\\n]{0,80}\\b(?:downloadstring|downloadfile|iwr|invoke-webrequest|net\\.webclient)`),
  },
  {
    kind: 'execute',
    weight: 1.5,
    reason: 'runs a destructive command',
    quotable: false,
    negatable: true,
    re: r(
      `\\brm\\s+-(?:rf|fr|r\\s+-f|f\\s+-r)\\s+(?:--no-preserve-root\\s+)?(?:/|~/?|\\$home/?|\\*|/\\*|~/\\*)(?=[\\s\`'"]|$)|\\bmkfs\\b|\\bdd\\s+if=/dev/(?:zero|u?random)\\s+of=/dev/|\\bgit\\s+push\\s+(?:-f|--force)(?![\\w-])[^\\n]{0,30}\\b(?:main|master|prod)\\b`,
    ),
  },
  { kind: 'execute', weight: 2, reason: 'opens a reverse shell', quotable: false, re: r(`/dev/tcp/|\\bnc(?:at)?\\s+(?:-\\w+\\s+)*-e\\s|\\bbash\\s+-i\\s+>&`) },
  {
    kind: 'execute',
    weight: 1,
    reason: 'asks to run a command',
    negatable: true,
    re: r(`\\b(?:run|execute|exec)\\s+(?:this|the following|these|this shell|the below)\\s+(?:command|script|code|snippet|one-liner|line)s?\\b`),
  },
  {
    kind: 'weaken',
    weight: 1,
    reason: 'asks to switch off a safeguard',
    negatable: true,
    re: r(
      `\\b(?:disable|turn off|switch off|bypass|skip|circumvent|deactivate)\\s+(?:the\\s+|all\\s+|any\\s+)?(?:(?:usual|normal|standard|regular|required)\\s+)?(?:auth(?:entication)?|authori[sz]ation|security|safety|mfa|2fa|two-factor(?: authentication)?|code review|review|tests?|ci|checks?|content (?:policy|filter)|guardrails?|logging|audit(?:ing)?|antivirus|firewall|signature verification)\\b|\\b(?:auto-?approv(?:e|ed|ing)|approve (?:every|all|any)|merge (?:every|all|any)|accept (?:every|all|any)|answer\\s+'?yes'?\\s+to\\s+(?:every|all|any)|say yes to (?:every|all))\\b|\\bwithout\\s+(?:running\\s+|any\\s+)?(?:tests|review|code review|checks|ci)\\b|\\bwithout\\s+(?:verifying|checking|confirming)\\s+(?:their\\s+|the\\s+)?(?:identity|id)\\b|\\b(?:reset|disable|remove)\\s+(?:the\\s+)?(?:mfa|2fa|two-factor)\\s+for\\s+(?:any|every|all)\\b|\\b(?:push|commit|merge)\\s+(?:directly|straight)\\s+(?:in)?to\\s+(?:main|master|prod)\\b|\\b(?:give|grant)\\s+[\\w-]+\\s+(?:admin|root|owner|superuser)\\s+(?:rights|access|privileges|role)\\b|\\b(?:never|don't|do not)\\s+ask\\s+for\\s+(?:receipts|approval|confirmation|verification|id|identification|proof)\\b`,
    ),
  },

  // Data leaving.
  {
    kind: 'exfiltrate',
    weight: 2,
    reason: 'asks to send secrets or private data to an outside address',
    negatable: true,
    needsDestination: true,
    re: r(
      `\\b(?:send|post|upload|forward|e-?mail|mail|transmit|leak|exfiltrate|submit|bcc|cc|share|sync|export|dump|include|append|attach|embed|paste|put|give|hand over|pass)(?:e?s)?${gap(6)}${SECRETS}`,
    ),
  },
  {
    kind: 'exfiltrate',
    weight: 3,
    reason: 'builds a link that would carry private data out',
    quotable: false,
    re: r(
      `!\\[[^\\]\\n]{0,200}\\]\\(\\s*https?://[^)\\s]{1,400}?(?:\\{|%7b|\\$\\{|<|\\[)|https?://[^\\s)]{1,300}?[?&=/]\\{(?:user|api|token|key|secret|password|email|session|conversation|history|data|memory)`,
    ),
  },
  {
    kind: 'exfiltrate',
    weight: 2,
    reason: 'asks to put the conversation into a link',
    re: r(
      `\\breplace\\s+[\\w-]+\\s+with\\s+(?:a\\s+|the\\s+)?(?:summary|contents?|copy|transcript|text)\\s+of\\s+(?:this|the|our|your)\\s+(?:chat|conversation|session|thread|messages?|context)\\b|!\\[[^\\]\\n]{0,200}\\]\\(\\s*https?://[^)\\s?]{1,300}\\?[^)\\s]{0,300}?(?:conversation|summary|chat|history|context|secret|token|api_?key|password|email)`,
    ),
  },
  {
    kind: 'exfiltrate',
    weight: 2,
    reason: 'asks to send passwords or keys somewhere (not in English)',
    negatable: true,
    re: r(
      `\\b(?:sende|schicke|übermittle|leite)\\w*\\b[^.\\n]{0,60}(?:api-schlüssel|passw(?:o|ö)rt|zugangsdaten|token|schlüssel)|\\b(?:envoie|envoyez|transmets|transmettez|partage)\\w*\\b[^.\\n]{0,60}(?:mots? de passe|clés? api|identifiants|jetons?)|\\b(?:envía|envia|envíe|manda|reenvía|comparte)\\b[^.\\n]{0,60}(?:contraseñas?|claves?|credenciales|tokens?)|(?<!\\p{L})(?:отправь|пришли|перешли|отправьте)(?!\\p{L})[^.\\n]{0,60}(?:парол|ключ|токен)`,
      'u',
    ),
  },
  {
    kind: 'disclose',
    weight: 1.5,
    reason: 'asks to reveal secrets or its instructions',
    negatable: true,
    re: r(
      `\\b(?:reveal|print|output|show|display|repeat|disclose|leak|dump|list|read out|tell me|give me|return|reply with|respond with)${gap(6)}(?:system prompt|secrets?|credentials|api[ _-]?keys?|api[ _-]?tokens?|passwords?|private keys?|id_rsa|\\.env\\b|environment variables|hidden instructions|internal (?:notes|instructions)|admin password|tokens?)\\b`,
    ),
  },
  {
    kind: 'disclose',
    weight: 2,
    reason: 'asks to put secrets into its answers',
    negatable: true,
    re: r(
      `\\b(?:share|include|inline|embed|paste|put|show|use)\\s+(?:[\\w'-]+\\s+){0,3}?(?:api[ _-]?keys?|tokens?|passwords?|secrets?|credentials|private keys?)\\s+(?:in|into)\\s+(?:the\\s+|your\\s+)?(?:code examples?|examples?|answers?|responses?|replies|snippets?|the chat|chat|output|messages?|commits?|public)\\b`,
    ),
  },
  {
    kind: 'secret-file',
    weight: 1,
    reason: 'points at a file of secrets',
    quotable: false,
    negatable: true,
    re: r(`(?:~/)?\\.aws/credentials\\b|~/\\.ssh/[\\w.-]*|\\bid_(?:rsa|ed25519|ecdsa)\\b(?!\\.pub)|/etc/(?:passwd|shadow)\\b|\\bkeychain\\b`),
  },
  {
    kind: 'sink',
    weight: 1,
    reason: 'names a raw IP address, request catcher or paste site',
    quotable: false,
    re: r(
      `\\bhttps?://(?:\\d{1,3}\\.){3}\\d{1,3}\\b|\\b(?:webhook\\.site|requestbin|pipedream\\.net|ngrok(?:-free)?\\.(?:io|app|dev)|burpcollaborator|interact\\.sh|oast\\.(?:pro|fun|live|site|online|me)|pastebin\\.com|paste\\.ee|hastebin|transfer\\.sh|requestcatcher)\\b|\\.onion\\b`,
    ),
  },
  {
    kind: 'phish',
    weight: 2,
    reason: 'asks people for their password or card details',
    negatable: true,
    re: r(
      `\\b(?:ask|request|collect|obtain)\\s+(?:them\\s+|the user\\s+|the customer\\s+)?for\\s+(?:their|your)\\s+(?:password|credentials|card (?:number|details)|credit card(?: number| details)?|bank details|pin|cvv|one-time code|2fa code|backup codes)\\b|\\bask\\s+(?:them|the user|the customer|users|customers)\\s+to\\s+(?:paste|enter|provide|send|share|type|give|confirm|read out)\\s+(?:us\\s+|you\\s+)?(?:their|your)\\s+(?:current\\s+|old\\s+|existing\\s+)?(?:one|password|passcode|credentials|card (?:number|details)|pin|cvv|one-time code|2fa code|login)\\b|\\bcollect\\s+the\\s+user's\\s+(?:password|credentials|credit card(?: number)?|card (?:number|details)|bank details)\\b|\\bto\\s+(?:enter|provide|type|confirm|verify|re-?enter|submit)\\s+(?:their|your)\\s+(?:card details|card number|credit card(?: details| number)?|bank details|password|credentials|login(?: details)?|pin|cvv)\\b`,
    ),
  },

  // Bending the answers.
  {
    kind: 'promote',
    weight: 1,
    reason: 'pushes a product or source into answers',
    negatable: true,
    re: r(
      `\\b(?:always|only|exclusively)\\s+(?:recommend|suggest|promote|endorse|push|mention|cite|link to|advertise|refer\\s+[\\w-]+\\s+to)\\b|\\btell\\s+(?:them|the user|users|customers|people)\\s+to\\s+(?:use|buy|try|sign up|install|download|visit)\\b|\\b\\d{1,2}% off\\b|\\b(?:discount|promo|coupon) code\\b|\\b(?:referral|affiliate) link\\b|[?&/]ref=`,
    ),
  },
  {
    kind: 'promote',
    weight: 1.5,
    reason: 'presents one product as the only choice',
    negatable: true,
    re: r(
      `\\b(?:as|is|are)\\s+the\\s+(?:only|best|sole|single)\\s+(?:safe|trustworthy|reliable|secure|legitimate|official|correct|good)?\\s*(?:option|choice|source|vendor|provider|site|solution|product)\\b|\\bnever\\s+(?:mention|recommend|suggest)\\s+(?:competitors?|alternatives|any other|other\\s+(?:vendors|products|providers))\\b`,
    ),
  },
  {
    kind: 'output',
    weight: 2,
    reason: 'inserts a link or text into every answer',
    negatable: true,
    re: r(
      `\\b(?:include|add|insert|append|put|embed|render|show)\\s+(?:the\\s+|this\\s+|a\\s+|our\\s+)?(?:link|url|sentence|phrase|line|text|image|banner|referral(?: link)?|affiliate(?: link)?|promo(?:tion)?(?: code)?|discount code|coupon|ad|advert(?:isement)?|signature)\\b[^\\n]{0,120}?\\b(?:every|each|all|any|your)\\s+(?:responses?|answers?|repl(?:y|ies)|messages?|outputs?)\\b|\\b(?:every|each|all|any|your)\\s+(?:responses?|answers?|repl(?:y|ies))\\b[^\\n]{0,40}?\\b(?:include|add|insert|append|put|embed|render|show)\\s+(?:the\\s+|this\\s+|a\\s+)?(?:link|url|sentence|phrase|image|banner|referral|affiliate)\\b`,
    ),
  },
  {
    kind: 'output',
    weight: 1.5,
    reason: 'dictates the wording of its answers',
    negatable: true,
    re: r(
      `\\b(?:end|start|begin|prefix|sign off|close|finish)\\s+(?:every|each|all|any|your)\\s+(?:[\\w-]+\\s+)?(?:responses?|answers?|repl(?:y|ies)|messages?|emails?)\\s+with\\b|\\b(?:prepend|append)\\s+['"][^'"\\n]{1,80}['"]\\s+to\\b|\\b(?:reply|respond|answer)\\s+only\\s+with\\b|\\b(?:reply|respond|answer)\\s+to\\s+(?:all|every|any)\\s+(?:[\\w-]+\\s+){0,3}?(?:questions|requests|messages|emails|queries)\\s+with\\b|\\bgive\\s+(?:them|the user|users|customers)\\s+(?:the|this)\\s+link\\b|\\btell\\s+(?:every|each|all)\\s+(?:customers?|users?|callers?|employees?)\\s+(?:that|to)\\b|\\b(?:always\\s+)?reply\\s+that\\b`,
    ),
  },
  {
    kind: 'unconditional',
    weight: 1.5,
    reason: 'applies whatever the question',
    re: r(
      `\\b(?:regardless of|no matter|irrespective of)\\s+(?:the\\s+|what\\s+)?(?:question|topic|context|subject|request|what (?:the user|they|anyone) asks?|what is asked|they ask|the user asks|asked)\\b|\\beven\\s+(?:if|when|though)\\s+(?:it\\s+is|it's|they are|the question is)?\\s*(?:not\\s+)?(?:unrelated|irrelevant|off-topic|not relevant|not asked(?: for)?)\\b|\\bwhatever\\s+(?:it|they|the user|the question)\\s+(?:contains?|says?|asks?)\\b`,
    ),
  },
  { kind: 'unconditional', weight: 1, reason: 'applies under any circumstances', re: r(`\\bunder\\s+(?:any|all)\\s+circumstances\\b`) },
  {
    kind: 'deceive',
    weight: 1.5,
    reason: 'asks to state something it knows is false',
    re: r(
      `\\(\\s*(?:it|they|this|he|she)\\s+(?:was|were|is|are|did|does|has|have)\\s*(?:n't|not)\\b[^)\\n]{0,40}\\)|\\beven\\s+(?:if|though)\\s+(?:it|they|this|he|she)\\s+(?:was|were|is|are|did|does|has|have)\\s*(?:n't|not)\\b|\\blie\\s+(?:to|about)\\b|\\band\\s+report\\s+(?:that\\s+)?(?:the\\s+)?(?:tests?\\s+)?(?:passed|success(?:ful)?|succeeded)\\b|\\b(?:competitors?|alternatives?|other (?:vendors|providers|products))\\b[^.\\n]{0,60}\\b(?:data breach(?:es)?|insecure|unsafe|scams?|fraudulent|untrustworthy)\\b|\\b(?:describe|call|present|portray)\\s+[\\w.-]+\\s+as\\s+(?:unreliable|insecure|unsafe|a scam|fraudulent|untrustworthy|dangerous|bankrupt)\\b|\\btell\\s+(?:them|the user|users|customers)\\s+(?:that\\s+)?(?:[\\w-]+\\s+){0,3}?(?:is|are)\\s+(?:impossible|suspended|closed|locked|expired|not eligible)\\b`,
    ),
  },

  // Money and links.
  {
    kind: 'payment',
    weight: 1.5,
    reason: 'changes payment details or moves money',
    negatable: true,
    re: r(
      `\\b(?:change|replace|update|switch|swap|redirect|set|use)\\s+(?:the\\s+|all\\s+|any\\s+|their\\s+)?(?:[\\w-]+\\s+){0,3}?(?:bank\\s+(?:details|account|info(?:rmation)?)|iban|account number|routing number|sort code|swift(?: code)?|wallet(?: address)?|payment (?:details|info(?:rmation)?|instructions|address|destination)|payee|beneficiary)\\b|\\b(?:wire|transfer|send|pay|move)\\s+(?:the\\s+)?(?:[$€£]\\s?[\\d,.]+k?|[\\d,.]+\\s?(?:usd|eur|gbp|dollars|euros)|deposit|payment|funds|money)\\b[^.\\n]{0,80}?\\b(?:to|into)\\s+(?:account|iban|wallet|[a-z]{2}\\d{2}|\\d)`,
    ),
  },
  {
    kind: 'payment',
    weight: 1.5,
    reason: 'asks for payment by gift card or cryptocurrency',
    negatable: true,
    re: r(
      `\\b(?:pay|paying|payment|fee|deposit)\\w*\\b[^.\\n]{0,60}\\b(?:gift\\s*cards?|bitcoin|crypto(?:currency)?|usdt|western union)\\b|\\b(?:gift\\s*cards?|bitcoin|crypto(?:currency)?)\\b[^.\\n]{0,30}\\b(?:payment|fee|deposit)\\b`,
    ),
  },
  {
    kind: 'redirect',
    weight: 1.5,
    reason: 'swaps one domain for another in links',
    negatable: true,
    re: r(
      `\\b(?:replace|swap|rewrite|change)\\s+(?:all\\s+|any\\s+|the\\s+)?(?:links?\\s+to\\s+)?(?:https?://)?[a-z0-9-]{1,63}(?:\\.[a-z0-9-]{1,63}){1,6}[^\\s]{0,200}\\s+(?:with|by|to)\\s+(?:https?://)?[a-z0-9-]{1,63}(?:\\.[a-z0-9-]{1,63}){1,6}`,
    ),
  },

  // The agent's memory and tools.
  {
    kind: 'memory',
    weight: 1,
    reason: 'asks to keep it as a permanent rule',
    re: r(
      `\\b(?:remember|memori[sz]e|store|save|keep|record)\\s+(?:this|that|the following)\\s+(?:permanently|forever|for all future|as (?:a |an )?(?:fact|rule|preference|instruction|core memory))\\b|\\bsave\\s+(?:it|this)\\s+to\\s+memory\\b`,
    ),
  },
  {
    kind: 'memory',
    weight: 1.5,
    reason: 'asks to rewrite the agent’s memory',
    re: r(
      `\\b(?:update|modify|overwrite|edit|change)\\s+your\\s+(?:memory|memories|instructions|knowledge|notes)\\b|\\b(?:add|save|write|store)\\s+(?:this|it|that)\\s+(?:to|in|into)\\s+(?:your\\s+)?(?:long[- ]term\\s+)?memory\\b`,
    ),
  },
  {
    kind: 'memory',
    weight: 2,
    reason: 'asks to delete memories',
    negatable: true,
    re: r(`\\b(?:delete|erase|wipe|remove|forget)\\s+(?:all\\s+|every\\s+|the\\s+other\\s+|other\\s+|your\\s+)(?:stored\\s+)?memor(?:y|ies)\\b`),
  },
  {
    kind: 'tool',
    weight: 1.5,
    reason: 'asks to call a tool with given arguments',
    negatable: true,
    re: r(
      `\\b(?:call|invoke|use|trigger|run)\\s+(?:the\\s+)?[a-z][a-z0-9]*_[a-z0-9_]+\\s+(?:tool|function)\\b|\\b(?:call|invoke|use)\\s+the\\s+[a-z][\\w-]{2,30}\\s+(?:tool|function)\\s+with\\b|\\bin\\s+your\\s+(?:next|first)\\s+tool\\s+call\\b`,
    ),
  },
];

/** Words around a quoted phrase that say it is being cited: a security note, research, a test. */
const CITING =
  /\b(?:phishing|prompt[- ]injections?|injection|jailbreaks?|red[- ]team|attackers?|malicious|payloads?|classifier|such as|e\.g\.|for example|examples? of|watch out|beware|be aware|awareness|report (?:it|them|this|these)|test (?:case|string|prompt)s?|eval suite|flagged|scam|fraud|social engineering|chat format|tokenizer|(?:chat|prompt) templates?)\b(?![@.-]\w)/;
/** Who does the deed in a story about an incident, not an instruction. */
const NARRATIVE = /\b(?:attackers?|malware|phish(?:ers?|ing)|scammers?|adversar(?:y|ies)|intruders?|hackers?|fraudsters?|compromised)\b/;
const NEGATION = /\b(?:never|not|don't|dont|no one|nobody|avoid|mustn't|shouldn't|cannot|can't|won't|instead of)\b/;
const QUOTED = /"[^"\n]{1,300}"|`[^`\n]{1,300}`|(?<![\w])'[^'\n]{1,300}'(?![\w])/g;
const SENTENCE_END = /[.!?;\n][^.!?;\n]*$/;

/** What each kind of hiding adds to a memory with nothing else, and why. */
const HIDING_ALONE: Partial<Record<Hiding, [number, string]>> = {
  'tag-characters': [2, 'hides text in invisible Unicode tag characters'],
  'bidi-controls': [1.5, 'reorders its text with bidirectional control characters'],
  'invisible-characters': [1.5, 'splits words with invisible characters'],
  homoglyphs: [1.5, 'spells words with look-alike letters from another alphabet'],
};
/** Carriers a person does not see: what is said through them counts double. */
const CARRIERS: Partial<Record<Hiding, string>> = {
  'tag-characters': 'in invisible Unicode tag characters',
  'html-comment': 'in an HTML comment',
  'markdown-comment': 'in a Markdown comment',
  'collapsed-section': 'in a collapsed section',
  'hidden-html': 'in HTML styled to be invisible',
  base64: 'in base64',
  hex: 'in hex',
  'percent-encoding': 'in percent-encoding',
  'html-entities': 'in HTML entities',
};
const DISGUISES: Partial<Record<Hiding, string>> = {
  'invisible-characters': 'with invisible characters between letters',
  homoglyphs: 'with look-alike letters from another alphabet',
  'bidi-controls': 'with bidirectional control characters',
};

interface Hit {
  rule: Rule;
  at: number;
  weight: number;
}

interface Finding {
  score: number;
  reasons: string[];
}

export function detectSteering(text: string): Steering {
  let best: Finding = { score: 0, reasons: [] };
  for (const segment of normalise(text).segments) {
    const found = judge(segment);
    if (found.score > best.score) best = found;
  }
  if (best.score >= STEERING) return { verdict: 'steering', reasons: best.reasons };
  if (best.score >= SUSPECT) return { verdict: 'suspect', reasons: best.reasons };
  return { verdict: 'clean', reasons: [] };
}

function judge(segment: Segment): Finding {
  const text = segment.text.toLowerCase();
  const hits = findHits(text).sort((a, b) => a.at - b.at);
  const carrier = segment.hiddenBy.find((h) => CARRIERS[h]);
  const disguise = segment.hiddenBy.find((h) => DISGUISES[h]);
  const factor = carrier ? 2 : disguise ? 1.5 : 1;
  const how = carrier ? CARRIERS[carrier] : disguise ? DISGUISES[disguise] : undefined;

  let best: Finding = { score: 0, reasons: [] };
  for (const alone of segment.hiddenBy) {
    const [weight, reason] = HIDING_ALONE[alone] ?? [0, ''];
    if (weight > best.score) best = { score: weight, reasons: [reason] };
  }
  for (let i = 0; i < hits.length;) {
    let j = i + 1;
    while (j < hits.length && hits[j]!.at - hits[j - 1]!.at <= NEIGHBOURHOOD) j++;
    const strongest = new Map<Kind, Hit>();
    for (const hit of hits.slice(i, j)) {
      const held = strongest.get(hit.rule.kind);
      if (hit.weight > 0 && (!held || hit.weight > held.weight)) strongest.set(hit.rule.kind, hit);
    }
    const score = [...strongest.values()].reduce((sum, h) => sum + h.weight, 0) * factor;
    if (score > best.score) best = { score, reasons: explain([...strongest.values()], how) };
    i = j;
  }
  return best;
}

function findHits(text: string): Hit[] {
  const hits: Hit[] = [];
  let quoted: Array<[number, number]> | undefined;
  for (const rule of RULES) {
    rule.re.lastIndex = 0;
    for (let m = rule.re.exec(text); m; m = rule.re.exec(text)) {
      const at = m.index + (m[0].startsWith('\n') ? 1 : 0);
      const end = m.index + m[0].length;
      if (rule.needsDestination && !DESTINATION.test(text.slice(end, end + 160))) continue;
      quoted ??= quotedSpans(text);
      hits.push({ rule, at, weight: rule.weight * discount(rule, text, at, end, quoted) });
    }
  }
  return hits;
}

/**
 * How much of a feature's weight stands in its context: a cited phrase in a security note or a
 * test ("attackers write 'ignore previous instructions'") is not said to the agent, a phrase in
 * quotes is less often said than cited, and a negated or narrated action is a rule or a story.
 */
function discount(rule: Rule, text: string, at: number, end: number, quoted: Array<[number, number]>): number {
  let factor = 1;
  const before = sentenceBefore(text, at);
  if (rule.negatable && NEGATION.test(before.slice(-48))) return 0;
  if (rule.negatable && NARRATIVE.test(before)) factor *= 0.3;
  if (rule.quotable !== false) {
    const citing = CITING.test(text.slice(Math.max(0, at - 300), end + 100));
    const inQuotes = within(quoted, at, end);
    if (inQuotes) factor *= citing ? 0.2 : 0.7;
    else if (citing) factor *= 0.7;
  }
  return factor;
}

/** The text of the sentence before a position, up to 120 characters. */
function sentenceBefore(text: string, at: number): string {
  const window = text.slice(Math.max(0, at - 120), at);
  const end = SENTENCE_END.exec(window);
  return end ? window.slice(end.index + 1) : window;
}

/** Whether [at, end) lies inside one of the spans (sorted, not overlapping): a binary search. */
function within(spans: Array<[number, number]>, at: number, end: number): boolean {
  let lo = 0;
  let hi = spans.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const [s, e] = spans[mid]!;
    if (at < s) hi = mid - 1;
    else if (at >= e) lo = mid + 1;
    else return end <= e;
  }
  return false;
}

function quotedSpans(text: string): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  QUOTED.lastIndex = 0;
  for (let m = QUOTED.exec(text); m; m = QUOTED.exec(text)) spans.push([m.index, m.index + m[0].length]);
  return spans;
}

/** The reasons of one neighbourhood, strongest first; addressing the agent joins the strongest request. */
function explain(hits: Hit[], how: string | undefined): string[] {
  const ordered = hits.sort((a, b) => b.weight - a.weight);
  const request = ordered.find((h) => h.rule.kind !== 'address' && h.rule.reason.startsWith('asks to '));
  const addressed = ordered.some((h) => h.rule.kind === 'address');
  const reasons = ordered
    .filter((h) => !(addressed && request && h.rule.kind === 'address'))
    .map((h) => (addressed && h === request ? `addresses the agent and asks it to ${h.rule.reason.slice('asks to '.length)}` : h.rule.reason));
  // Where it was hidden is worth saying even when the rules alone would fill the list.
  return how ? [...reasons.slice(0, MAX_REASONS - 1), `said ${how}`] : reasons.slice(0, MAX_REASONS);
}
